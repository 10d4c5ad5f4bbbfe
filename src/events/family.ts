// An event family: the two steps the flow asks of it. Read the current state from S/4HANA (never trust the
// event's data beyond its key), then write the effect in one transaction. The parsed event chooses its family.
import type { Context } from '../telemetry/tracing.js';
import type { EffectResult } from './applyEffect.js';
import type { ParsedEvent } from './cloudEvent.js';

export interface Family<State = unknown> {
  /** 4. The current state, read before any transaction opens; null when S/4HANA does not know it. Throws on failure. */
  read(event: ParsedEvent, signal: AbortSignal | undefined, trace: Context): Promise<State | null>;
  /** 5. The one transaction: record the event, upsert the state, queue what goes out. Throws on failure. */
  writeEffect(event: ParsedEvent, state: State, trace: Context): Promise<EffectResult>;
}

/** What a commit queued, for the senders to be woken without waiting for their next poll. */
export type Queued = Pick<EffectResult, 'mailQueued' | 'pushQueued'>;
