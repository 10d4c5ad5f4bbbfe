// What the shared path asks an event family for, and nothing else: which CloudEvent types are its and the key
// their data names, its read and effect (family.ts), how its outbox rows become an email and a portal PUT, and
// what logs, traces and the admin API call its key. src/families/index.ts lists the families, one folder each.
import type { SendMailOptions } from 'nodemailer';
import type { Config } from '../config/loadConfig.js';
import type { Executor } from '../db/transaction.js';
import type { TimelineFamily } from '../http/timeline.js';
import type { ClaimedMail } from '../notifications/mailOutbox.js';
import type { ClaimedPush } from '../portal/pushOutbox.js';
import type { Family, FamilyDeps } from './family.js';
import type { Failure } from './reasonText.js';

/** The admin API's routes of a family's key (src/http/adminRoutes.ts registers them for every family). */
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
  /** Its timeline. */
  timeline: TimelineFamily<unknown>;
}

/** What every family's email is rendered with: the sender, MAIL_LOCALE, PORTAL_ORDER_URL. */
export interface MailSettings {
  from: string;
  locale: string;
  portalOrderUrl?: string | undefined;
}

export interface FamilyModule {
  /** ParsedEvent.family of its events. */
  name: string;
  /** The `family` label of the metrics. */
  label: string;
  /** The key's name in log lines (`salesOrder`) and in span attributes (`sap.`, then snake case). */
  logKey: string;
  spanKey: string;
  /** Whether a CloudEvent type is the family's, handled or not: an unhandled one is refused by keyOf. */
  owns(type: string): boolean;
  /** The key an event's data names, normalised as every table holds it, or why the event is refused. */
  keyOf(type: string, data: unknown): { ok: true; key: string } | Failure;
  /** Its reader and effect, built by the composition root. */
  create(deps: FamilyDeps, config: Readonly<Config>): Family;
  mail: {
    /** The email of a row of its family; throws a PermanentError on content the family never wrote. */
    render(mail: ClaimedMail, settings: MailSettings): SendMailOptions;
  };
  push: {
    /** The PUT's path below the portal's base URL, and its JSON body; throws a PermanentError likewise. */
    request(push: ClaimedPush): { path: string; body: unknown };
  };
  admin: FamilyAdmin;
}
