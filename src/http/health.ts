import type { Pool } from 'pg';

export interface HealthReport {
  status: 'UP' | 'DOWN';
  /** Ready to take work: the database answers and every configured ingest is up. */
  ready: boolean;
  checks: {
    database: 'up' | 'down';
    amqp: 'attached' | 'detached' | 'disabled';
    outbox: { pending: number; oldestPendingSeconds: number } | null;
  };
}

/**
 * Liveness is the database answering: without it nothing can be done, and a restart may help. A missing
 * broker only makes the process not ready: it reconnects by itself, so restarting it would help nothing.
 */
export async function checkHealth(
  pool: Pool,
  amqp: { isAttached(): boolean } | undefined,
): Promise<HealthReport> {
  let outbox: HealthReport['checks']['outbox'] = null;
  try {
    const { rows } = await pool.query<{ pending: number; oldest: number }>({
      text: `select count(*)::int as "pending",
                    coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as "oldest"
             from mail_outbox where state = 'pending'`,
      query_timeout: 1000,
    } as never);
    outbox = { pending: rows[0]?.pending ?? 0, oldestPendingSeconds: Math.round(rows[0]?.oldest ?? 0) };
  } catch {
    outbox = null;
  }
  const database = outbox === null ? 'down' : 'up';
  const amqpState = amqp === undefined ? 'disabled' : amqp.isAttached() ? 'attached' : 'detached';
  return {
    status: database === 'up' ? 'UP' : 'DOWN',
    ready: database === 'up' && amqpState !== 'detached',
    checks: { database, amqp: amqpState, outbox },
  };
}
