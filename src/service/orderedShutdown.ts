// The service's shutdown: an ordered list of named steps, run by shutdown.ts. In this order: intake
// stops first (in-flight messages finish or are released; anything still unsettled returns to the queue on
// disconnect, and webhook requests in flight answer before the server closes), then reconciliation (a run stops
// before its next page), then the loops that write (a retention pass ends after its current batch), and the pool
// last.
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { HealthCheck } from '../http/health.js';
import type { Retention } from '../maintenance/retention.js';
import type { AmqpConsumer } from '../messaging/amqpConsumer.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { OutboxSenders } from './outboxSenders.js';
import type { Reconciliation } from './reconciliation.js';
import { type Closer, shutdownInOrder } from './shutdown.js';

export interface OpenParts extends OutboxSenders {
  /** Makes /health answer not ready, so the router stops sending requests. */
  notReady: () => void;
  amqp: AmqpConsumer | undefined;
  app: FastifyInstance;
  retention: Retention;
  reconciliation: Reconciliation | undefined;
  tracing: Tracing | undefined;
  pool: Pool;
  health: HealthCheck;
}

// Cloud Foundry sends SIGKILL 10 s after SIGTERM; leave room for the process to exit.
const SHUTDOWN_BUDGET_MS = 8000;

/** Ordered, time-boxed and memoised: closes whatever is open, started or not. */
export function orderedShutdown(parts: OpenParts, logger: Logger): () => Promise<void> {
  const { amqp, app, mailSender, portalSender, retention, transport, tracing, pool, health } = parts;
  const steps: Closer[] = [
    {
      name: 'readiness',
      share: 0,
      close: () => {
        parts.notReady();
        logger.info('shutting down');
      },
    },
    { name: 'intake', share: 0.7, close: (ms) => Promise.all([amqp?.stop(ms * 0.9), app.close()]) },
    // A run stops before its next page; the next one, on any instance, starts from the mark.
    { name: 'reconciliation', share: 0.5, close: () => parts.reconciliation?.stop() },
    {
      name: 'the mail sender, the portal sender and retention',
      share: 0.5,
      close: () => Promise.all([mailSender.stop(), portalSender?.stop(), retention.stop()]),
    },
    { name: 'the mail transport', share: 0, close: () => transport.close() },
    // After the loops, so the last sends' spans go out too.
    { name: 'the trace exporter', share: 0.3, close: () => tracing?.shutdown() },
    { name: 'the database pools', share: 1, close: () => Promise.all([pool.end(), health.close()]) },
    {
      name: 'the log',
      share: 0,
      close: () => {
        logger.info('stopped');
        logger.flush();
      },
    },
  ];
  return shutdownInOrder(steps, SHUTDOWN_BUDGET_MS, logger);
}
