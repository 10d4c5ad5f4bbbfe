// The identity side of exactly-once-in-effect: which events are processed, which were refused, and how often
// each unprocessed one has been delivered. Every statement on processed_event and event_attempt is here or, for
// recording an event as processed, in processedRecord.ts; retention runs the expiry statements below.
import type { Pool } from 'pg';
import { deleteOldest } from '../db/deleteOldest.js';
import type { Executor } from '../db/transaction.js';
import { refusedEventSql } from './deadLetter.js';
import type { ParsedEvent } from './parsedEvent.js';

export interface InboxEntry {
  /** Hash of the payload recorded when the event was processed, or null if it is not processed yet. */
  processedHash: string | null;
  /** Deliveries of this unprocessed event so far, this one included (0 when processed or refused). */
  attempts: number;
  lastError: string | null;
  /** Whether the event has a dead letter not yet replayed: it was refused, and this is it again. */
  refused: boolean;
}

/** The channel a delivery came by (outcome.ts's Channel, which imports from here): kept with its counts. */
export type Channel = string;

/**
 * Looks the event up and, unless it is processed or refused, counts this delivery, in one auto-committed
 * statement.
 * Counting before any work is what lets a message that kills the process be recognised on its next delivery.
 * A duplicate (same payload hash) costs one index read and one row in duplicate_arrival, for its document's
 * timeline. It commits without the WAL flush; identityCheckSql says why.
 */
export async function checkInbox(db: Pool, event: ParsedEvent, channel: Channel): Promise<InboxEntry> {
  const { rows } = await db.query<InboxEntry & { id: string }>({
    name: 'check-inbox-one',
    text: identityCheckSql({
      delivered: 'select $2::text as id, $3::text as payload_hash, $5::text as family, $6::text as key',
    }),
    values: [
      event.source,
      event.id,
      event.payloadHash,
      channel,
      event.family ?? null,
      event.key ?? null,
      event.reconciled?.run ?? null,
    ],
  });
  const { id: _id, ...entry } = rows[0] as InboxEntry & { id: string };
  return entry;
}

/**
 * checkInboxes' statement: $1 source, $2 ids, $3 payload hashes, $4 channel, $5 families, $6 keys, $7 the
 * reconciliation run (null for events).
 */
export const CHECK_INBOXES = identityCheckSql({
  delivered: `select id, payload_hash, family, key
     from unnest($2::text[], $3::text[], $5::text[], $6::text[]) as d(id, payload_hash, family, key)`,
});

/**
 * checkInbox for several events of one source with distinct ids, in one statement: their entries by id. Their
 * payload hashes recognise refused ones and duplicates.
 *
 * Arrays cost a lone check: PostgreSQL plans this statement anew at every execution, as it costs the generic plan,
 * which cannot know an array's length, above a custom plan for one id. checkInbox, on scalars, keeps its generic
 * plan (docs/performance.md, Throughput at 0 ms).
 */
export async function checkInboxes(
  db: Pool,
  source: string,
  events: Array<Pick<ParsedEvent, 'id' | 'payloadHash' | 'family' | 'key'>>,
  channel: Channel,
  reconcileRun: string | null = null,
): Promise<Map<string, InboxEntry>> {
  const { rows } = await db.query<InboxEntry & { id: string }>({
    // Named: prepared once per connection, then only bound and executed.
    name: 'check-inbox',
    text: CHECK_INBOXES,
    values: [
      source,
      events.map((event) => event.id),
      events.map((event) => event.payloadHash),
      channel,
      events.map((event) => event.family ?? null),
      events.map((event) => event.key ?? null),
      reconcileRun,
    ],
  });
  return new Map(rows.map(({ id, ...entry }) => [id, entry]));
}

/**
 * The identity check, for the deliveries that `delivered` selects (id, payload_hash, family, key)
 * of source $1, by channel $4 (and reconciliation run $7): one row per delivery, its entry with its id.
 *
 * Each delivery's record is probed by its whole key, in a scalar subquery that PostgreSQL never turns into a join
 * or a scan: with `id = any(...)` a plan made while the table looked small (a new deployment's, or any table
 * growing faster than autovacuum analyzes it) read every record of the source for each check.
 *
 * It commits without waiting for the WAL flush (synchronous_commit off for this statement's transaction only):
 * the count must survive the service dying, not PostgreSQL crashing (docs/performance.md, Throughput at 0 ms).
 * Hence it takes the pool, never a transaction's client, inside which the setting would hold for the whole
 * transaction.
 * The counts are written in the order of their keys, as the effect statement deletes them, so that statements of
 * several instances over the same identities wait for each other instead of deadlocking.
 */
function identityCheckSql(sql: { delivered: string }): string {
  return `with async_commit as (
       select set_config('synchronous_commit', 'off', true)
     ), delivered as (
       ${sql.delivered}
     ), seen as (
       select id, payload_hash from (
         select d.id,
                (select p.payload_hash from processed_event p where p.source = $1::text and p.id = d.id) as payload_hash
         from delivered d
       ) probed
       where payload_hash is not null
     ), refused as (
       select d.id, ${refusedEventSql('$1::text', 'd.id', 'd.payload_hash')} as refused from delivered d
     ), attempt as (
       insert into event_attempt as a (source, id, channel, family, key, reconcile_run)
       select $1::text, d.id, $4::text, d.family, d.key, $7::bigint from delivered d join refused r using (id)
       where not exists (select from seen s where s.id = d.id) and not r.refused
       order by d.id
       on conflict (source, id) do update set attempts = a.attempts + 1, last_seen_at = now(),
         channel = excluded.channel, reconcile_run = excluded.reconcile_run
       returning a.id, a.attempts, a.last_error
     ), duplicate as (
       insert into duplicate_arrival (source, id, channel)
       select $1::text, d.id, $4::text from delivered d join seen s using (id, payload_hash)
     )
     select d.id, s.payload_hash as "processedHash", coalesce(t.attempts, 0) as "attempts",
            t.last_error as "lastError", r.refused as "refused"
     from async_commit, delivered d join refused r using (id) left join seen s using (id)
       left join attempt t using (id)`;
}

/** Keeps the last failure beside the delivery count, for the reason given when the limit is reached. */
export async function noteAttemptError(db: Executor, event: ParsedEvent, error: string): Promise<void> {
  await db.query(`update event_attempt set last_error = $3::text where source = $1::text and id = $2::text`, [
    event.source,
    event.id,
    error,
  ]);
}

/**
 * The event's deliveries so far: how long ago, in milliseconds by the database's clock, the first counted one
 * arrived, and how many were counted, this one included (0 and 0: none).
 */
export async function deliveriesSoFar(
  db: Executor,
  event: ParsedEvent,
): Promise<{ waitedMs: number; attempts: number }> {
  const { rows } = await db.query<{ waitedMs: number; attempts: number }>(
    `select (extract(epoch from now() - first_seen_at) * 1000)::float8 as "waitedMs", attempts
     from event_attempt where source = $1::text and id = $2::text`,
    [event.source, event.id],
  );
  return rows[0] ?? { waitedMs: 0, attempts: 0 };
}

/**
 * Forgets an event's delivery count, so that it starts again with a full budget: when it is dead-lettered (in
 * the same transaction as the dead letter) and when an operator replays it.
 */
export async function clearAttempts(db: Executor, identity: { source: string; id: string }): Promise<void> {
  await db.query(`delete from event_attempt where source = $1::text and id = $2::text`, [
    identity.source,
    identity.id,
  ]);
}

/** Age of the oldest processed-event record in seconds (0 when there is none), for /metrics. */
export async function oldestProcessedAgeSeconds(db: Executor): Promise<number> {
  const { rows } = await db.query<{ age: number }>(
    `select coalesce(extract(epoch from now() - min(processed_at)), 0)::float8 as "age" from processed_event`,
  );
  return rows[0]?.age ?? 0;
}

/**
 * Retention: records older than the deduplication window, delivery counts not seen for as long, and arrivals of
 * duplicates as old (their events' records may outlive them, never the other way round).
 */
export const EXPIRED_PROCESSED_EVENTS = deleteOldest('processed_event', 'processed_at');
export const EXPIRED_EVENT_ATTEMPTS = deleteOldest('event_attempt', 'last_seen_at');
export const EXPIRED_DUPLICATE_ARRIVALS = deleteOldest('duplicate_arrival', 'arrived_at');

/** How many of these records of a reconciliation run changed what was notified ('new' or 'changed'): repairs. */
export async function changesRecorded(
  db: Executor,
  source: string,
  ids: readonly string[],
  run: string,
): Promise<number> {
  const { rows } = await db.query<{ changes: number }>(
    `select count(*)::int as "changes" from processed_event
     where source = $1::text and id = any($2::text[]) and reconcile_run = $3::bigint
       and notification in ('new', 'changed')`,
    [source, ids, run],
  );
  return rows[0]?.changes ?? 0;
}
