// The identity side of exactly-once-in-effect: which events are processed, which were refused, and how often
// each unprocessed one has been delivered. Every statement on processed_event and event_attempt is here; the
// effect's single statement embeds recordProcessedSql, and retention runs the expiry statements below.
import type { Pool } from 'pg';
import { deleteOldest } from '../db/deleteOldest.js';
import type { Executor } from '../db/transaction.js';
import type { ParsedEvent } from './cloudEvent.js';
import { refusedEventSql } from './deadLetter.js';
import { perTurn } from './perTurn.js';

/**
 * What processing an event came to, kept in processed_event.outcome (the column and the admin API keep that
 * name). Not to be confused with handleEvent's Outcome, the decision how to settle the message.
 */
export type ProcessedResult = 'applied' | 'stale' | 'not_found' | 'ignored';

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
type Channel = string;

/**
 * Looks the event up and, unless it is processed or refused, counts this delivery, in one auto-committed
 * statement.
 * Counting before any work is what lets a message that kills the process be recognised on its next delivery.
 * A duplicate (same payload hash) costs one index read and one row in duplicate_arrival, for the order's
 * timeline. It commits without the WAL flush; checkInboxes says why.
 */
export async function checkInbox(db: Pool, event: ParsedEvent, channel: Channel): Promise<InboxEntry> {
  const { rows } = await db.query<InboxEntry>({
    name: 'check-inbox-one',
    text: `with async_commit as (
       select set_config('synchronous_commit', 'off', true)
     ), seen as (
       select payload_hash from processed_event where source = $1::text and id = $2::text
     ), refused as (
       select ${refusedEventSql('$1::text', '$2::text', '$3::text')} as refused
     ), attempt as (
       insert into event_attempt as a (source, id, channel, sales_order)
       select $1::text, $2::text, $4::text, $5::text
       where not exists (select from seen) and not (select refused from refused)
       on conflict (source, id) do update set attempts = a.attempts + 1, last_seen_at = now(),
         channel = excluded.channel
       returning attempts, last_error
     ), duplicate as (
       insert into duplicate_arrival (source, id, channel)
       select $1::text, $2::text, $4::text from seen where payload_hash = $3::text
     )
     select (select payload_hash from seen) as "processedHash",
            coalesce((select attempts from attempt), 0) as "attempts",
            (select last_error from attempt) as "lastError",
            (select refused from refused) as "refused"
     from async_commit`,
    values: [event.source, event.id, event.payloadHash, channel, event.salesOrder ?? null],
  });
  return rows[0] as InboxEntry;
}

/**
 * checkInbox for several events of one source with distinct ids, in one statement: their entries by id. Their
 * payload hashes recognise refused ones and duplicates.
 *
 * Arrays cost a lone check: PostgreSQL plans this statement anew at every execution, as it costs the generic plan,
 * which cannot know an array's length, above a custom plan for one id. checkInbox, on scalars, keeps its generic
 * plan (docs/performance.md, Throughput at 0 ms).
 *
 * It commits without waiting for the WAL flush (synchronous_commit off for this statement's transaction only):
 * the count must survive the service dying, not PostgreSQL crashing (bench/NOTES.md, Throughput at 0 ms). Hence
 * it takes the pool, never a transaction's client, inside which the setting would hold for the whole transaction.
 * The counts are written in the order of their keys, as the effect statement deletes them, so that statements of
 * several instances over the same identities wait for each other instead of deadlocking.
 */
export async function checkInboxes(
  db: Pool,
  source: string,
  events: Array<Pick<ParsedEvent, 'id' | 'payloadHash' | 'salesOrder'>>,
  channel: Channel,
): Promise<Map<string, InboxEntry>> {
  const { rows } = await db.query<InboxEntry & { id: string }>({
    // Named: prepared once per connection, then only bound and executed.
    name: 'check-inbox',
    text: `with async_commit as (
       select set_config('synchronous_commit', 'off', true)
     ), delivered as (
       select id, payload_hash, sales_order from unnest($2::text[], $3::text[], $5::text[])
         as d(id, payload_hash, sales_order)
     ), seen as (
       select id, payload_hash from processed_event where source = $1::text and id = any($2::text[])
     ), refused as (
       select d.id, ${refusedEventSql('$1::text', 'd.id', 'd.payload_hash')} as refused from delivered d
     ), attempt as (
       insert into event_attempt as a (source, id, channel, sales_order)
       select $1::text, d.id, $4::text, d.sales_order from delivered d join refused r using (id)
       where not exists (select from seen s where s.id = d.id) and not r.refused
       order by d.id
       on conflict (source, id) do update set attempts = a.attempts + 1, last_seen_at = now(),
         channel = excluded.channel
       returning a.id, a.attempts, a.last_error
     ), duplicate as (
       insert into duplicate_arrival (source, id, channel)
       select $1::text, d.id, $4::text from delivered d join seen s using (id, payload_hash)
     )
     select d.id, s.payload_hash as "processedHash", coalesce(t.attempts, 0) as "attempts",
            t.last_error as "lastError", r.refused as "refused"
     from async_commit, delivered d join refused r using (id) left join seen s using (id)
       left join attempt t using (id)`,
    values: [
      source,
      events.map((event) => event.id),
      events.map((event) => event.payloadHash),
      channel,
      events.map((event) => event.salesOrder ?? null),
    ],
  });
  return new Map(rows.map(({ id, ...entry }) => [id, entry]));
}

interface Check {
  event: ParsedEvent;
  channel: Channel;
  resolve: (entry: InboxEntry) => void;
  reject: (err: unknown) => void;
}

/**
 * checkInbox, with the checks asked for in one turn of the event loop for events of one source made in one
 * statement (perTurn.ts); a check alone in its turn, the usual at low rates, goes out as checkInbox. A failure
 * fails every check of the statement; each retries on its own. An identity
 * asked for twice in one turn (the handler lets one identity through at a time, so only another caller could)
 * is checked in a statement of its own, as one statement cannot count the same row twice.
 */
export function batchInboxChecks(db: Pool): (event: ParsedEvent, channel: Channel) => Promise<InboxEntry> {
  const gather = perTurn<Check>((checks) => {
    const batch = new Map<string, Check>();
    for (const check of checks) {
      if (batch.has(check.event.id))
        checkInbox(db, check.event, check.channel).then(check.resolve, check.reject);
      else batch.set(check.event.id, check);
    }
    const [first] = checks as [Check];
    if (batch.size === 1) {
      checkInbox(db, first.event, first.channel).then(first.resolve, first.reject);
      return;
    }
    const events = [...batch.values()].map((check) => check.event);
    checkInboxes(db, first.event.source, events, first.channel).then(
      (entries) => {
        for (const [id, check] of batch) check.resolve(entries.get(id) as InboxEntry);
      },
      (err: unknown) => {
        for (const check of batch.values()) check.reject(err);
      },
    );
  });
  // One statement per source and channel: the channel is one parameter of it.
  return (event, channel) =>
    new Promise((resolve, reject) =>
      gather(`${channel} ${event.source}`, { event, channel, resolve, reject }),
    );
}

/**
 * Records an event that has no effect beyond its record (not found in S/4HANA, or of a type the portal ignores)
 * and forgets its delivery count, in one statement. Returns false when the identity is already recorded: another
 * delivery won the race. Events with an effect are recorded by applyEffect.ts, in the effect's statement.
 */
export async function recordProcessed(
  tx: Executor,
  event: ParsedEvent,
  result: ProcessedResult,
): Promise<boolean> {
  const recorded = await unlessRecordedAlready(
    tx.query({
      name: 'record-processed',
      text: `with ${recordProcessedSql({ outcome: '$6::text' })} select`,
      values: [...identityValues([event]), event.salesOrder ?? null, result],
    }),
  );
  return recorded !== undefined;
}

/** What an effect's statement saw and decided, as SQL over its own parameters and tables. */
export interface ReadAndDecision {
  portalStatus: string;
  requestedDeliveryDate: string;
  changedAt: string;
  /** 'new', 'changed' or 'unchanged'; null when the read was stale. */
  notification: string;
}

/**
 * Records events as processed inside a larger statement: `cleared` forgets their delivery counts, `recorded`
 * inserts a record per event with what the count knew (channel, first delivery, deliveries, last error) and, from
 * an effect, what its S/4HANA read saw and the notification decision. An identity recorded already fails the whole
 * statement: the first delivery stands alone. $1 to $4 as identityValues gives them, $5 the sales order, the
 * outcome as SQL (docs/processing.md, The flow).
 */
export function recordProcessedSql(sql: { outcome: string; read?: ReadAndDecision }): string {
  const read = sql.read;
  const seen = read
    ? `${read.portalStatus}, ${read.requestedDeliveryDate}, ${read.changedAt}, ${read.notification}`
    : 'null, null::date, null::timestamptz, null';
  return `cleared as (
       delete from event_attempt where source = $1::text and id = any($2::text[])
       returning id, channel, first_seen_at, attempts, last_error
     ), recorded as (
       insert into processed_event (source, id, type, sales_order, outcome, payload_hash, channel, received_at,
         attempts, last_error, read_portal_status, read_requested_delivery_date, read_changed_at, notification)
       select $1::text, e.id, e.type, $5::text, ${sql.outcome}, e.payload_hash, c.channel, c.first_seen_at,
              c.attempts, c.last_error, ${seen}
       from unnest($2::text[], $3::text[], $4::text[]) as e(id, type, payload_hash) left join cleared c using (id)
     )`;
}

/** $1 to $4 of a statement embedding recordProcessedSql: the events' source, and their ids, types and hashes. */
export function identityValues(events: ParsedEvent[]): [string, string[], string[], string[]] {
  const [{ source }] = events as [ParsedEvent];
  if (events.some((event) => event.source !== source)) throw new Error('events of one record share a source');
  return [
    source,
    events.map((event) => event.id),
    events.map((event) => event.type),
    events.map((event) => event.payloadHash),
  ];
}

/**
 * What a statement embedding recordProcessedSql returns, or undefined when it failed because another delivery had
 * recorded the identity first (a unique violation on processed_event_pkey). Any other failure is thrown.
 */
export async function unlessRecordedAlready<T>(statement: Promise<T>): Promise<T | undefined> {
  try {
    return await statement;
  } catch (err) {
    const { code, constraint } = err as { code?: unknown; constraint?: unknown };
    if (code === '23505' && constraint === 'processed_event_pkey') return undefined;
    throw err;
  }
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
