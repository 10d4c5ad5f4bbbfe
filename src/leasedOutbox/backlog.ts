// What an outbox still holds, for /health and /metrics: the same three figures for the mail outbox and the
// portal push outbox, read over the rows not yet done only (each table has a partial index for them).
import type { QueryConfig } from 'pg';
import type { Executor } from '../db/transaction.js';

export interface Backlog {
  pending: number;
  parked: number;
  /** How long the oldest pending row has waited; 0 when none waits. */
  oldestPendingSeconds: number;
}

export interface BacklogTable {
  table: 'mail_outbox' | 'portal_push';
  /** The column that says since when a pending row waits. */
  pendingSince: 'created_at' | 'pending_since';
  /** The state of rows that are finished with. */
  done: 'sent' | 'done';
}

/** `timeoutMs` bounds the read where a probe must answer quickly (pg honours a per-query timeout). */
export async function readBacklog(db: Executor, of: BacklogTable, timeoutMs?: number): Promise<Backlog> {
  const query: QueryConfig & { query_timeout?: number } = {
    text: `select count(*) filter (where state = 'pending')::int as "pending",
                  count(*) filter (where state = 'parked')::int as "parked",
                  coalesce(extract(epoch from now() - min(${of.pendingSince}) filter (where state = 'pending')), 0)::float8
                    as "oldestPendingSeconds"
           from ${of.table} where state <> '${of.done}'`,
    query_timeout: timeoutMs,
  };
  const { rows } = await db.query<Backlog>(query);
  return rows[0] as Backlog;
}
