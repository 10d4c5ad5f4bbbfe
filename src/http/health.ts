import pg, { type Pool, type PoolConfig } from 'pg';
import type { Logger } from 'pino';
import { outboxBacklog } from '../notifications/mailOutbox.js';
import { pushBacklog } from '../portal/pushOutbox.js';

export interface HealthReport {
  status: 'UP' | 'DOWN';
  /** Ready to take work: the database answers and every configured ingest is up. */
  ready: boolean;
  checks: {
    database: 'up' | 'down';
    amqp: 'attached' | 'detached' | 'disabled';
    outbox: { pending: number; oldestPendingSeconds: number } | null;
    /** The portal push outbox, with PORTAL_DESTINATION set; null when it could not be read. */
    portalPush?: { pending: number; parked: number; oldestPendingSeconds: number } | null;
  };
}

type Amqp = { isAttached(): boolean } | undefined;

export interface HealthCheck {
  /** `portalPush`: report the push backlog too (PORTAL_DESTINATION is set). */
  check(amqp: Amqp, portalPush?: boolean): Promise<HealthReport>;
  close(): Promise<void>;
}

// Cloud Foundry's HTTP health check gives up after 1 s by default: a database that has not answered by this time
// counts as down, and the answer still arrives in time, with room for the way through the platform's router.
const ANSWER_WITHIN_MS = 700;

/**
 * /health on a connection of its own, never the service's pool. With every pool connection busy (a backlog at a
 * high prefetch, a slow database) a probe waiting for a slot would miss the platform's timeout, and the platform
 * would restart the busiest instances exactly when they are needed. One connection, kept open, with the
 * deadline on connecting as well as on the query.
 */
export function createHealthCheck(database: PoolConfig, logger: Logger): HealthCheck {
  const pool = new pg.Pool({
    ...database,
    max: 1,
    connectionTimeoutMillis: ANSWER_WITHIN_MS,
    idleTimeoutMillis: 0,
  });
  pool.on('error', (err) => logger.warn({ err }, 'health check connection failed'));
  return {
    check: (amqp, portalPush) => checkHealth(pool, amqp, ANSWER_WITHIN_MS, portalPush),
    close: () => pool.end(),
  };
}

/**
 * Liveness is the database answering: without it nothing can be done, and a restart may help. A missing
 * broker only makes the process not ready: it reconnects by itself, so restarting it would help nothing.
 * Answers within `timeoutMs`, whatever the database does.
 */
export async function checkHealth(
  pool: Pool,
  amqp: Amqp,
  timeoutMs = ANSWER_WITHIN_MS,
  portalPush = false,
): Promise<HealthReport> {
  // One connection: the two reads go one after the other, both within the one deadline. The push backlog gets
  // what the outbox left of it; when nothing is left it is reported unread, and liveness is decided already.
  const deadline = performance.now() + timeoutMs;
  const outbox = await withDeadline(outboxBacklog(pool, timeoutMs), timeoutMs).then(
    ({ pending, oldestPendingSeconds }) => ({
      pending,
      oldestPendingSeconds: Math.round(oldestPendingSeconds),
    }),
    () => null,
  );
  const left = Math.floor(deadline - performance.now());
  const push =
    portalPush && outbox !== null && left > 0
      ? await withDeadline(pushBacklog(pool, left), left).then(
          ({ pending, parked, oldestPendingSeconds }) => ({
            pending,
            parked,
            oldestPendingSeconds: Math.round(oldestPendingSeconds),
          }),
          () => null,
        )
      : null;
  const database = outbox === null ? 'down' : 'up';
  const amqpState = amqp === undefined ? 'disabled' : amqp.isAttached() ? 'attached' : 'detached';
  return {
    status: database === 'up' ? 'UP' : 'DOWN',
    ready: database === 'up' && amqpState !== 'detached',
    checks: { database, amqp: amqpState, outbox, ...(portalPush ? { portalPush: push } : {}) },
  };
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
