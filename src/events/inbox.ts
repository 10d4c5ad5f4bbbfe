// The identity side of exactly-once-in-effect: which events are processed, and how often each
// unprocessed one has been delivered.
import type { Pool } from 'pg';
import { type Executor, withTransaction } from '../db/transaction.js';
import type { PortalOrder } from '../portal/portalStatus.js';
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
 *
 * This statement alone commits without waiting for the WAL flush (synchronous_commit off, for its own
 * transaction only: set_config(…, true) ends with it). A synchronous commit here cost a disk flush per new
 * event, as much as the effect's own. It is safe: the count must survive the service process dying, and it
 * does, since the commit is in PostgreSQL at once and visible to every session; only a crash of PostgreSQL
 * itself within a fraction of a second could lose the latest counts, which costs a poison message a few more
 * deliveries, never an effect. The effect transaction keeps its synchronous commit, which flushes this
 * record too, as the WAL is flushed in order. Hence it takes the pool, never a transaction's client: inside a
 * transaction the setting would hold for the whole transaction.
 */
export async function checkInbox(db: Pool, event: ParsedEvent): Promise<InboxEntry> {
  const { rows } = await db.query<InboxEntry>({
    // Named: prepared once per connection, then only bound and executed.
    name: 'check-inbox',
    text: `with async_commit as (
       select set_config('synchronous_commit', 'off', true)
     ), seen as (
       select payload_hash from processed_event where source = $1::text and id = $2::text
     ), attempt as (
       insert into event_attempt as a (source, id)
       select $1::text, $2::text where not exists (select from seen)
       on conflict (source, id) do update set attempts = a.attempts + 1, last_seen_at = now()
       returning attempts, last_error
     )
     select (select payload_hash from seen) as "processedHash",
            coalesce((select attempts from attempt), 0) as "attempts",
            (select last_error from attempt) as "lastError"
     from async_commit`,
    values: [event.source, event.id],
  });
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
  const { rows } = await tx.query<{ recorded: boolean }>({
    name: 'record-processed',
    text: `with recorded as (
       insert into processed_event (source, id, type, sales_order, outcome, payload_hash)
       values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text)
       on conflict (source, id) do nothing
       returning 1
     ), cleared as (
       delete from event_attempt where source = $1::text and id = $2::text and exists (select from recorded)
     )
     select exists (select from recorded) as "recorded"`,
    values: [event.source, event.id, event.type, event.salesOrder ?? null, outcome, event.payloadHash],
  });
  return rows[0]?.recorded === true;
}

export interface EffectResult {
  result: 'applied' | 'stale' | 'duplicate';
  /** An email was queued in the outbox: wake the sender. */
  mailQueued: boolean;
}

/**
 * The effect of a new event with its order's current state, in one transaction: record the event as processed
 * (a conflict on source + id means another delivery won: nothing else is written), upsert the portal row unless
 * the stored state is newer (the row lock taken there orders concurrent events of one order), and if this state
 * became the portal's and its (status, requested delivery date) differs from the pair last notified, record the
 * pair and queue one email. One statement does all of it, in that order: each step takes its rows from the one
 * before (`where exists (select from recorded)`, `from portal`, `from changed`), so PostgreSQL runs them in
 * sequence, each under the locks of the previous. A second statement marks the record stale when the portal kept
 * a newer state; the label cannot be known before the upsert that must come after the record.
 * Three round trips (begin, the statement, commit) where one statement per step took five: on two cores
 * the round trips, not the SQL, were what the database and the service spent their time on.
 */
export async function applyEffect(
  pool: Pool,
  event: ParsedEvent,
  order: PortalOrder,
  mail: { to: string[]; messageIdDomain: string },
): Promise<EffectResult> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ recorded: boolean; applied: boolean; mailQueued: boolean }>({
      name: 'apply-effect',
      text: `with recorded as (
         insert into processed_event (source, id, type, sales_order, outcome, payload_hash)
         values ($1::text, $2::text, $3::text, $4::text, 'applied', $5::text)
         on conflict (source, id) do nothing
         returning 1
       ), cleared as (
         delete from event_attempt where source = $1::text and id = $2::text and exists (select from recorded)
       ), portal as (
         insert into portal_order_status as current
           (sales_order, portal_status, requested_delivery_date, sold_to_party, customer_reference,
            s4_changed_at, s4_read_at)
         select $4::text, $6::text, $7::date, $8::text, $9::text, $10::timestamptz, $11::timestamptz
         where exists (select from recorded)
         on conflict (sales_order) do update set
           portal_status = excluded.portal_status,
           requested_delivery_date = excluded.requested_delivery_date,
           sold_to_party = excluded.sold_to_party,
           customer_reference = excluded.customer_reference,
           s4_changed_at = excluded.s4_changed_at,
           s4_read_at = excluded.s4_read_at,
           updated_at = now()
         where (coalesce(excluded.s4_changed_at, '-infinity'), excluded.s4_read_at)
            >= (coalesce(current.s4_changed_at, '-infinity'), current.s4_read_at)
         returning 1
       ), changed as (
         insert into order_notification as last (sales_order, portal_status, requested_delivery_date)
         select $4::text, $6::text, $7::date from portal
         on conflict (sales_order) do update set
           portal_status = excluded.portal_status,
           requested_delivery_date = excluded.requested_delivery_date,
           notified_at = now()
         where (last.portal_status, last.requested_delivery_date)
               is distinct from (excluded.portal_status, excluded.requested_delivery_date)
         returning 1
       ), queued as (
         insert into mail_outbox
           (sales_order, portal_status, requested_delivery_date, sold_to_party, customer_reference, recipients,
            message_id)
         select $4::text, $6::text, $7::date, $8::text, $9::text,
                coalesce((select recipients from mail_recipient where sold_to_party = $8::text), $12::text[]),
                '<' || gen_random_uuid() || '@' || $13::text || '>'
         from changed
         returning 1
       )
       select exists (select from recorded) as "recorded", exists (select from portal) as "applied",
              exists (select from queued) as "mailQueued"`,
      values: [
        event.source,
        event.id,
        event.type,
        order.salesOrder,
        event.payloadHash,
        order.portalStatus,
        order.requestedDeliveryDate,
        order.soldToParty,
        order.customerReference,
        order.changedAt,
        order.readAt,
        mail.to,
        mail.messageIdDomain,
      ],
    });
    const row = rows[0];
    if (row?.recorded !== true) return { result: 'duplicate', mailQueued: false };
    if (!row.applied) {
      await markStale(tx, event);
      return { result: 'stale', mailQueued: false };
    }
    return { result: 'applied', mailQueued: row.mailQueued };
  });
}

export async function markStale(tx: Executor, event: ParsedEvent): Promise<void> {
  await tx.query({
    name: 'mark-stale',
    text: `update processed_event set outcome = 'stale' where source = $1::text and id = $2::text`,
    values: [event.source, event.id],
  });
}

/** Keeps the last failure beside the delivery count, for the reason given when the limit is reached. */
export async function noteAttemptError(db: Executor, event: ParsedEvent, error: string): Promise<void> {
  await db.query(`update event_attempt set last_error = $3::text where source = $1::text and id = $2::text`, [
    event.source,
    event.id,
    error,
  ]);
}

/** Forgets an event's delivery count: once it is dead-lettered, a replay must start with a fresh budget. */
export async function forgetAttempts(db: Executor, event: ParsedEvent): Promise<void> {
  await db.query(`delete from event_attempt where source = $1::text and id = $2::text`, [
    event.source,
    event.id,
  ]);
}
