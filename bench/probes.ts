// What the benchmark reads from the database while a consumer runs: which events it recorded, and when. The
// service records them in processed_event, the plain consumer in plain_processed_event; both take `now()`, the
// start of the event's transaction, as its time.
import type { BenchDatabase } from './infrastructure.js';

export type EventTable = 'processed_event' | 'plain_processed_event';

/** Commit time (ms since the epoch) of each listed event that is recorded. */
export async function commitTimes(
  db: BenchDatabase,
  table: EventTable,
  ids: string[],
): Promise<Map<string, number>> {
  const { rows } = await db.pool.query<{ id: string; ms: number }>(
    `select id, extract(epoch from processed_at)::float8 * 1000 as "ms" from ${table} where id = any($1::text[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.ms]));
}

export async function recordedCount(db: BenchDatabase, table: EventTable): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`select count(*)::int as "n" from ${table}`);
  return rows[0]?.n ?? 0;
}

export async function mailsQueued(
  db: BenchDatabase,
  table: 'mail_outbox' | 'plain_mail_outbox',
): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`select count(*)::int as "n" from ${table}`);
  return rows[0]?.n ?? 0;
}
