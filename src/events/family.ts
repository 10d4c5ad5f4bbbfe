// An event family as the per-message path asks it: which CloudEvent types are its and the key their data names
// (the parser), what logs and traces call that key, and the two steps of the flow. Read the current state from
// S/4HANA (never trust the event's data beyond its key), then write the effect in one transaction. The
// composition root hands the families in; the parsed event chooses its family.
import type { Context } from '../telemetry/tracing.js';
import type { EffectResult } from './effect.js';
import type { ParsedEvent } from './parsedEvent.js';
import type { Failure } from './reasonText.js';

/** What the parser, the logs and the traces ask of a family. */
export interface EventKeys {
  /** ParsedEvent.family of its events. */
  name: string;
  /** The key's name in log lines and in span attributes, as the family calls it. */
  logKey: string;
  spanKey: string;
  /** Whether a CloudEvent type is the family's, handled or not: an unhandled one is refused by keyOf. */
  owns(type: string): boolean;
  /** The key an event's data names, normalised as every table holds it, or why the event is refused. */
  keyOf(type: string, data: unknown): { ok: true; key: string } | Failure;
}

/** The family a parsed event named; undefined for an event of no family. */
export function keysNamed(families: readonly EventKeys[], name: string | undefined): EventKeys | undefined {
  return name === undefined ? undefined : families.find((family) => family.name === name);
}

export interface Family<State = unknown> {
  /** 4. The current state, read before any transaction opens; null when S/4HANA does not know it. Throws on failure. */
  read(event: ParsedEvent, signal: AbortSignal | undefined, trace: Context): Promise<State | null>;
  /** 5. The one transaction: record the event, upsert the state, queue what goes out. Throws on failure. */
  writeEffect(event: ParsedEvent, state: State, trace: Context): Promise<EffectResult>;
}

/** What a commit queued, for the senders to be woken without waiting for their next poll. */
export type Queued = Pick<EffectResult, 'mailQueued' | 'pushQueued'>;
