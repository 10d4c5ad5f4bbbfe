// What the admin API asks of an event family: the routes of its key, its overview and timeline, and its part of
// the summary. adminRoutes.ts registers them for every family the composition root hands in.
import type { Executor } from '../db/transaction.js';
import type { TimelineFamily } from './timeline.js';

export interface FamilyAdmin {
  /** The lookups: GET `<lookup>/:<param>` (the overview) and GET `<lookup>/:<param>/timeline`. */
  lookup: string;
  /** The operator's push retry: POST `<pushes>/:<param>/retry`. */
  pushes: string;
  /** The key's name in the path and in the answers. */
  param: string;
  /** What the key names, in a 404's message. */
  what: string;
  /** The key as events carry it, checked before a handler runs. */
  keyPattern: RegExp;
  /** The key as every table holds it. */
  normalise(raw: string): string;
  overview(db: Executor, key: string): Promise<object | null>;
  /** Its timeline, and the key's column in every table (the push retry's too). */
  timeline: TimelineFamily<unknown>;
  /** Its counts in GET /api/summary, beside the shared ones. */
  summary?(db: Executor): Promise<object>;
  /** What the console shows of the family (GET /api/families). */
  console: FamilyConsole;
}

/** The console's words for a family, so that it hard-codes none. */
export interface FamilyConsole {
  /** Its search page's hash, e.g. `orders` for #/orders/1000473: the lookup's path below /api, where the parked
   * lists link. */
  page: string;
  label: string;
  example: string;
  /** The prefix its event types share, left out of the timeline's entries. */
  typePrefix: string;
  /** How a state reads: each value of a timeline's `read` and steps, after its words (`requested delivery`). */
  state: ReadonlyArray<readonly [field: string, words: string]>;
}
