// What should happen to a message, as data: the flow decides it, and only the transport adapters (AMQP,
// webhook, Event Hub) and the replay act on it.
import type { Logger } from 'pino';
import type { InboundMessage, ParsedEvent } from './parsedEvent.js';
import type { ProcessedResult } from './processedRecord.js';

export type Outcome =
  /** Done with, for good: settle as accepted. */
  | { kind: 'accept'; result: AcceptedResult }
  /** Could not be done now: hand it back for redelivery. */
  | { kind: 'release'; code: 'transient_failure'; reason: string }
  /** Can never be done: dead-letter it with the reason. */
  | { kind: 'reject'; code: RejectCode; reason: string };

/** Where a message came from: a transport, an operator replaying a dead letter, or reconciliation's read. */
export type Channel = 'amqp' | 'webhook' | 'event-hub' | 'replay' | 'reconcile';

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

/** A handled message: its final outcome, a reject already stored as a dead letter. */
export interface Handled {
  outcome: Outcome;
  /** The event, once it parsed: for logs and metrics. */
  event: ParsedEvent | undefined;
  /** The stored letter of a reject; null when the database refused the letter for its content. */
  deadLetterId?: string | null;
}

export interface HandleContext {
  channel: Channel;
  /** Aborted at shutdown: retry waits end at once and the message is released. */
  signal?: AbortSignal;
  /** Transport metadata as received, kept with a dead letter for diagnosis. */
  headers?: Record<string, unknown>;
  /** The transport's logger for this message; a refusal's log lines go there. */
  log?: Logger;
}

/** One handler serves every channel, so deliveries of one identity overlap nowhere in the instance. */
export type HandleEvent = (message: InboundMessage, context: HandleContext) => Promise<Handled>;
