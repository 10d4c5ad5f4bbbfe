// Recording events as processed: on their own (no effect beyond the record), or inside the effect's single
// statement, which embeds recordProcessedSql. The record takes over what the delivery count knew.
import type { Executor } from '../db/transaction.js';
import type { ParsedEvent } from './parsedEvent.js';

/**
 * What processing an event came to, kept in processed_event.outcome (the column and the admin API keep that
 * name). Not to be confused with handleEvent's Outcome, the decision how to settle the message.
 */
export type ProcessedResult = 'applied' | 'stale' | 'not_found' | 'ignored' | 'not_warranty_case';

/**
 * Records an event that has no effect beyond its record (not found in S/4HANA, or of a type the portal ignores)
 * and forgets its delivery count, in one statement. Returns false when the identity is already recorded: another
 * delivery won the race. Events with an effect are recorded by their family's effect.ts, in the effect's statement.
 */
export async function recordProcessed(
  tx: Executor,
  event: ParsedEvent,
  result: ProcessedResult,
): Promise<boolean> {
  const recorded = await unlessRecordedAlready(
    tx.query({
      name: 'record-processed',
      text: `with ${recordProcessedSql({ outcome: '$7::text' })} select`,
      values: [...identityValues([event]), result],
    }),
  );
  return recorded !== undefined;
}

/** What an effect's statement saw and decided, as SQL over its own parameters and tables. */
export interface ReadAndDecision {
  /** What the S/4HANA read saw, a jsonb the family's timeline renders (TimelineFamily.read). */
  seen: string;
  /** 'new', 'changed' or 'unchanged'; null when the read was stale. */
  notification: string;
}

/**
 * Records events as processed inside a larger statement: `cleared` forgets their delivery counts, `recorded`
 * inserts a record per event with what the count knew (channel, first delivery, deliveries, last error, the
 * reconciliation run) and, from
 * an effect, what its S/4HANA read saw and the notification decision. An identity recorded already fails the whole
 * statement: the first delivery stands alone. $1 to $6 as identityValues gives them (with the family and key the
 * events name), the outcome as SQL (docs/processing.md, The flow).
 *
 * `cleared` locks each count by its whole key, in key order as the identity check writes them, in a scalar
 * subquery that PostgreSQL never turns into a scan, then deletes the locked rows by ctid, which cannot change
 * while the lock is held. With `id = any(...)`, a plan made while the table looked small read every count of
 * the source, and an outage leaves thousands of them.
 */
export function recordProcessedSql(sql: { outcome: string; read?: ReadAndDecision }): string {
  const seen = sql.read ? `${sql.read.seen}, ${sql.read.notification}` : 'null::jsonb, null::text';
  return `cleared as (
       delete from event_attempt where ctid = any(array(
         select (select a.ctid from event_attempt a where a.source = $1::text and a.id = e.id for update)
         from (select id from unnest($2::text[]) as id order by id) e
       ))
       returning id, channel, first_seen_at, attempts, last_error, reconcile_run
     ), recorded as (
       insert into processed_event (source, id, type, family, key, outcome, payload_hash, channel, received_at,
         attempts, last_error, read, notification, reconcile_run)
       select $1::text, e.id, e.type, $5::text, $6::text, ${sql.outcome}, e.payload_hash, c.channel, c.first_seen_at,
              c.attempts, c.last_error, ${seen}, c.reconcile_run
       from unnest($2::text[], $3::text[], $4::text[]) as e(id, type, payload_hash) left join cleared c using (id)
     )`;
}

/**
 * The notification decision of an effect as SQL, from its CTEs: null when `written` (the upsert) wrote nothing
 * (stale), 'unchanged' when `changed` (the ledger's move) is empty, 'new' when the ledger had no `previous`.
 */
export function notificationSql(written: string, previous: string): string {
  return `case when not exists (select from ${written}) then null
          when not exists (select from changed) then 'unchanged'
          when exists (select from changed where ${previous} is null) then 'new'
          else 'changed' end`;
}

/**
 * $1 to $6 of a statement embedding recordProcessedSql: the events' source, their ids, types and hashes, and the
 * family and key they name.
 */
export function identityValues(
  events: ParsedEvent[],
): [string, string[], string[], string[], string | null, string | null] {
  const [{ source, family, key }] = events as [ParsedEvent];
  if (events.some((event) => event.source !== source || event.family !== family || event.key !== key))
    throw new Error('events of one record share a source and a document');
  return [
    source,
    events.map((event) => event.id),
    events.map((event) => event.type),
    events.map((event) => event.payloadHash),
    family ?? null,
    key ?? null,
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
