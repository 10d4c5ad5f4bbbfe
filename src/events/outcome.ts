// What should happen to a message, as data: the flow decides it, and only the transport adapters (AMQP,
// webhook, Event Hub) and the replay act on it.
import type { ProcessedResult } from './inbox.js';

export type Outcome =
  /** Done with, for good: settle as accepted. */
  | { kind: 'accept'; result: AcceptedResult }
  /** Could not be done now: hand it back for redelivery. */
  | { kind: 'release'; code: 'transient_failure'; reason: string }
  /** Can never be done: dead-letter it with the reason. */
  | { kind: 'reject'; code: RejectCode; reason: string };

/** Where a message came from: a transport, or an operator replaying a dead letter. */
export type Channel = 'amqp' | 'webhook' | 'event-hub' | 'replay';

export type RejectCode = 'invalid_event' | 'conflict' | 'delivery_limit' | 'permanent_failure';

/**
 * `already_refused`: a message refused before, whose dead letter stands, arriving again (Event Mesh sends a
 * rejected message again): taken, so that the broker forgets it, and nothing else done.
 */
export type AcceptedResult = ProcessedResult | 'duplicate' | 'already_refused';

export function accept(result: AcceptedResult): Outcome {
  return { kind: 'accept', result };
}

export function reject(code: RejectCode, reason: string): Outcome {
  return { kind: 'reject', code, reason };
}
