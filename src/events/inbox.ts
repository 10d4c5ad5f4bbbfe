// The identity side of exactly-once-in-effect: which events are processed, and how often each
// unprocessed one has been delivered.
import type { Executor } from '../db/transaction.js';
import type { ParsedEvent } from './cloudEvent.js';

export type ProcessedOutcome = 'applied' | 'stale' | 'not_found' | 'ignored';

export interface InboxEntry {
  /** Hash of the payload recorded when the event was processed, or null if it is not processed yet. */
  processedHash: string | null;
  /** Deliveries of this unprocessed event so far, this one included (0 when processed). */
  attempts: number;
  lastError: string | null;
}

/**
 * Looks the event up and, unless it is processed, counts this delivery, in one auto-committed statement.
 * Counting before any work is what lets a message that kills the process be recognised on its next delivery.
 * A duplicate costs one index read and writes nothing.
 */
export async function checkInbox(db: Executor, event: ParsedEvent): Promise<InboxEntry> {
  const { rows } = await db.query<InboxEntry>(
    `with seen as (
       select payload_hash from processed_event where source = $1::text and id = $2::text
     ), attempt as (
       insert into event_attempt as a (source, id)
       select $1::text, $2::text where not exists (select from seen)
       on conflict (source, id) do update set attempts = a.attempts + 1, last_seen_at = now()
       returning attempts, last_error
     )
     select (select payload_hash from seen) as "processedHash",
            coalesce((select attempts from attempt), 0) as "attempts",
            (select last_error from attempt) as "lastError"`,
    [event.source, event.id],
  );
  return rows[0] as InboxEntry;
}

/**
 * Records the event as processed inside the effect's transaction and forgets its delivery count.
 * Returns false when the identity is already recorded: another delivery won the race, nothing else may be written.
 */
export async function recordProcessed(
  tx: Executor,
  event: ParsedEvent,
  outcome: ProcessedOutcome,
): Promise<boolean> {
  const { rows } = await tx.query<{ recorded: boolean }>(
    `with recorded as (
       insert into processed_event (source, id, type, sales_order, outcome, payload_hash)
       values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text)
       on conflict (source, id) do nothing
       returning 1
     ), cleared as (
       delete from event_attempt where source = $1::text and id = $2::text and exists (select from recorded)
     )
     select exists (select from recorded) as "recorded"`,
    [event.source, event.id, event.type, event.salesOrder ?? null, outcome, event.payloadHash],
  );
  return rows[0]?.recorded === true;
}

export async function markStale(tx: Executor, event: ParsedEvent): Promise<void> {
  await tx.query(`update processed_event set outcome = 'stale' where source = $1::text and id = $2::text`, [
    event.source,
    event.id,
  ]);
}

/** Keeps the last failure beside the delivery count, for the reason given when the limit is reached. */
export async function noteAttemptError(db: Executor, event: ParsedEvent, error: string): Promise<void> {
  await db.query(`update event_attempt set last_error = $3::text where source = $1::text and id = $2::text`, [
    event.source,
    event.id,
    error,
  ]);
}
