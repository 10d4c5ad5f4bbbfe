// What the benchmark reads from the database while a consumer runs: which events it recorded and when each
// committed, and its emails. Commit times are PostgreSQL's own (`track_commit_timestamp`, postgresServer.ts): the
// commit timestamp of the transaction that wrote the row (xmin), for an email the one that marked it sent.
import type { BenchDatabase } from './infrastructure.js';

export type EventTable = 'processed_event' | 'plain_processed_event';
export type MailTable = 'mail_outbox' | 'plain_mail_outbox';

/**
 * Rows already in the tables before a phase (a full retention window, fullWindow.ts) are left out of its counts:
 * events processed before `at`, emails up to id `mailId`. Both are read through an index, so that counting
 * while a consumer runs costs the same on full tables as on empty ones.
 */
export interface Since {
  at: Date;
  mailId: number;
}
export const EMPTY_TABLES: Since = { at: new Date(0), mailId: 0 };

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

export async function recordedCount(
  db: BenchDatabase,
  table: EventTable,
  since = EMPTY_TABLES,
): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `select count(*)::int as "n" from ${table} where processed_at >= $1::timestamptz`,
    [since.at],
  );
  return rows[0]?.n ?? 0;
}

/** Where the tables stand now: what a phase started next leaves out of its counts. */
export async function currentSince(db: BenchDatabase): Promise<Since> {
  const { rows } = await db.pool.query<{ mailId: number }>(
    `select coalesce(max(id), 0)::float8 as "mailId" from mail_outbox`,
  );
  return { at: new Date(), mailId: rows[0]?.mailId ?? 0 };
}

/** Emails queued, emails marked sent, and when the last one sent was marked (ms since the epoch; NaN: none). */
export async function mails(
  db: BenchDatabase,
  table: MailTable,
  since = EMPTY_TABLES,
): Promise<{ queued: number; sent: number; lastSentMs: number }> {
  const { rows } = await db.pool.query<{ queued: number; sent: number; lastSentMs: number | null }>(
    `select count(*)::int as "queued", count(sent_at)::int as "sent",
            extract(epoch from max(pg_xact_commit_timestamp(xmin)) filter (where sent_at is not null))::float8 * 1000
              as "lastSentMs"
     from ${table} where id > $1::bigint`,
    [since.mailId],
  );
  const row = rows[0];
  return { queued: row?.queued ?? 0, sent: row?.sent ?? 0, lastSentMs: row?.lastSentMs ?? Number.NaN };
}

// The service's two statements per event, told apart by the table each writes first: the identity check counts
// the delivery (event_attempt), the effect records the event (processed_event).
const STATEMENT_TIMES = `select
    sum(total_exec_time) filter (where query ilike '%insert into event_attempt%')
      / nullif(sum(calls) filter (where query ilike '%insert into event_attempt%'), 0) as "identityCheck",
    sum(total_exec_time) filter (where query ilike '%insert into processed_event%')
      / nullif(sum(calls) filter (where query ilike '%insert into processed_event%'), 0) as "effect"
  from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())`;

/** Forgets the statement statistics (pg_stat_statements, postgresServer.ts): a phase reads only its own. */
export async function resetStatements(db: BenchDatabase): Promise<void> {
  await db.pool.query('select pg_stat_statements_reset()');
}

/** Mean execution time per call since the last reset, in ms; NaN for a statement not run. */
export async function statementTimes(db: BenchDatabase): Promise<{ identityCheck: number; effect: number }> {
  const { rows } = await db.pool.query<{ identityCheck: number | null; effect: number | null }>(
    STATEMENT_TIMES,
  );
  const row = rows[0];
  return { identityCheck: row?.identityCheck ?? Number.NaN, effect: row?.effect ?? Number.NaN };
}
