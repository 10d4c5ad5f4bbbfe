import type { Pool } from 'pg';
import { outboxBacklog } from '../notifications/outbox.js';

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
    const { pending, oldestPendingSeconds } = await outboxBacklog(pool, 1000);
    outbox = { pending, oldestPendingSeconds: Math.round(oldestPendingSeconds) };
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
