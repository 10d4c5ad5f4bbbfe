// What the benchmark reads from the database while a consumer runs: which events it recorded and when each
// committed, and its emails. Commit times are PostgreSQL's own (`track_commit_timestamp`, postgresServer.ts): the
// commit timestamp of the transaction that wrote the row (xmin), for an email the one that marked it sent.
import type { BenchDatabase } from './infrastructure.js';

export type EventTable = 'processed_event' | 'plain_processed_event';
export type MailTable = 'mail_outbox' | 'plain_mail_outbox';

/** Commit time (ms since the epoch) of each listed event that is recorded. */
export async function commitTimes(
  db: BenchDatabase,
  table: EventTable,
  ids: string[],
): Promise<Map<string, number>> {
  const { rows } = await db.pool.query<{ id: string; ms: number }>(
    `select id, extract(epoch from pg_xact_commit_timestamp(xmin))::float8 * 1000 as "ms"
     from ${table} where id = any($1::text[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.ms]));
}

export async function recordedCount(db: BenchDatabase, table: EventTable): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`select count(*)::int as "n" from ${table}`);
  return rows[0]?.n ?? 0;
}

/** Emails queued, emails marked sent, and when the last one sent was marked (ms since the epoch; NaN: none). */
export async function mails(
  db: BenchDatabase,
  table: MailTable,
): Promise<{ queued: number; sent: number; lastSentMs: number }> {
  const { rows } = await db.pool.query<{ queued: number; sent: number; lastSentMs: number | null }>(
    `select count(*)::int as "queued", count(sent_at)::int as "sent",
            extract(epoch from max(pg_xact_commit_timestamp(xmin)) filter (where sent_at is not null))::float8 * 1000
              as "lastSentMs"
     from ${table}`,
  );
  const row = rows[0];
  return { queued: row?.queued ?? 0, sent: row?.sent ?? 0, lastSentMs: row?.lastSentMs ?? Number.NaN };
}
