// Composition root: config → pool → migrate → clients → handler → ingest → HTTP, built apart from started;
// and the one ordered shutdown. The larger parts are wired beside it.
import { setGlobalLogLevel } from '@sap-cloud-sdk/util';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/loadConfig.js';
import { openPool } from '../db/openPool.js';
import type { HandleEvent } from '../events/outcome.js';
import { FAMILIES, type FamilyModule, familyExpiries } from '../families/index.js';
import { buildApp } from '../http/app.js';
import { createNoAuth, createXsuaaAuth } from '../http/auth.js';
import { createHealthCheck } from '../http/health.js';
import { createRetention, type Retention } from '../maintenance/retention.js';
import { type AmqpConsumer, createAmqpConsumer } from '../messaging/amqpConsumer.js';
import { ensureEventMeshQueue } from '../messaging/eventMeshSetup.js';
import type { MailSender } from '../notifications/mailSender.js';
import type { PortalSender } from '../portal/portalSender.js';
import { EXPIRED_RUNS } from '../reconcile/runs.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../retry.js';
import { createDestinationLimit } from '../s4/destinationLimit.js';
import { startTracing } from '../telemetry/tracing.js';
import { createEventFlow } from './eventFlow.js';
import { httpRoutes } from './httpRoutes.js';
import { createMetrics } from './metrics.js';
import { orderedShutdown } from './orderedShutdown.js';
import { createOutboxSenders } from './outboxSenders.js';
import { createReconciliation, type Reconciliation } from './reconciliation.js';

/** The service's parts, built and wired but not started: nothing listens, polls or consumes yet. */
export interface ServiceParts {
  app: FastifyInstance;
  pool: pg.Pool;
  handle: HandleEvent;
  amqp: AmqpConsumer | undefined;
  mailSender: MailSender;
  /** Pushes the families' states to the portal's API; undefined when PORTAL_DESTINATION is unset. */
  portalSender: PortalSender | undefined;
  retention: Retention;
  /** Reconciliation against S/4HANA; undefined without S4_SOURCE. */
  reconciliation: Reconciliation | undefined;
  /** Ordered, time-boxed and memoised: closes whatever is open, started or not. */
  stop(): Promise<void>;
}

export interface Service extends ServiceParts {
  /** Where the HTTP server listens, e.g. http://127.0.0.1:8080. */
  url: string;
}

export interface BuildOptions {
  /** The event families; FAMILIES of src/families/index.ts unless given. */
  families?: readonly FamilyModule[];
  retryPolicy?: RetryPolicy;
  mailPollMs?: number;
}

export interface StartOptions extends BuildOptions {
  host?: string;
}

/**
 * Builds every part from the configuration. It opens only the database pool (and migrates): tests drive the
 * parts directly (`app.inject`, `handle`), and `stop()` closes what was opened.
 */
export async function buildService(
  config: Readonly<Config>,
  logger: Logger,
  options: BuildOptions = {},
): Promise<ServiceParts> {
  // The SDK logs every destination lookup at info level, in its own format: keep only its errors.
  setGlobalLogLevel('error');

  const families = options.families ?? FAMILIES;
  const pool = await openPool(config.database, logger);

  // Off without an OTLP endpoint: then the OpenTelemetry SDK is never loaded and spans cost nothing.
  const tracing = config.tracing === undefined ? undefined : await startTracing(config.tracing);

  const metrics = createMetrics(
    pool,
    families,
    config.retention.processedEventDays,
    // Read at scrape time, after the consumer below exists.
    config.amqp === undefined
      ? {}
      : {
          amqpAttached: () => amqp?.isAttached() === true,
          amqpCreditWindow: () => amqp?.creditWindow() ?? 0,
        },
  );
  const senders = createOutboxSenders(config, families, pool, metrics, logger, options.mailPollMs);
  const { transport, mailSender, portalSender } = senders;
  const pushToPortal = portalSender !== undefined;

  // Built once: every family's reads, and reconciliation's below them, count against one limit and wait out one
  // pause of the destination.
  const s4Limit = createDestinationLimit({
    maxConcurrent: config.s4.maxConcurrentReads,
    onPause: metrics.s4Paused,
  });
  const { handle, applyRead } = createEventFlow(config, {
    families,
    pool,
    metrics,
    senders,
    retryPolicy: options.retryPolicy ?? DEFAULT_RETRY,
    logger,
    s4Limit,
  });
  const reconciliation =
    applyRead === undefined
      ? undefined
      : createReconciliation(config, {
          families,
          pool,
          s4Limit,
          applyRead,
          registry: metrics.registry,
          logger,
        });
  if (reconciliation === undefined)
    logger.info(
      'reconciliation is off: S4_SOURCE is not set, so the service cannot tell which events S/4HANA sent',
    );

  const auth = config.auth.kind === 'xsuaa' ? createXsuaaAuth(config.auth.credentials) : createNoAuth();
  if (config.auth.kind === 'none')
    logger.warn('AUTH=none: the admin API and the Event Mesh webhook accept any caller; local runs only');

  const amqp =
    config.amqp === undefined
      ? undefined
      : createAmqpConsumer({
          amqp: config.amqp,
          handle,
          logger: logger.child({ component: 'amqp' }),
          onReconnect: metrics.reconnect,
        });

  const plugins = httpRoutes(config, families, {
    pool,
    auth,
    handle,
    wakeMailSender: mailSender.wake,
    wakePortalSender: () => portalSender?.wake(),
    reconciliation,
    logger,
  });
  const retention = createRetention({
    pool,
    expiries: [...familyExpiries(families), { target: 'reconcileRuns', cutoff: 'event', sql: EXPIRED_RUNS }],
    logger: logger.child({ component: 'retention' }),
    processedEventDays: config.retention.processedEventDays,
    mailDays: config.retention.mailDays,
    intervalMs: config.retention.intervalSeconds * 1000,
  });

  let ready = true;
  const health = createHealthCheck(config.database, logger);
  let app: FastifyInstance;
  try {
    app = await buildApp({
      logger,
      health: async () => {
        const report = await health.check(amqp, pushToPortal);
        return ready ? report : { ...report, ready: false };
      },
      metrics: metrics.registry,
      bodyLimit: config.maxMessageBytes * 2,
      plugins,
    });
  } catch (err) {
    transport.close();
    await Promise.all([pool.end(), health.close(), tracing?.shutdown()]);
    throw err;
  }

  const notReady = () => {
    ready = false;
  };
  const stop = orderedShutdown(
    { ...senders, amqp, app, retention, reconciliation, tracing, pool, health, notReady },
    logger,
  );

  return { app, pool, handle, amqp, mailSender, portalSender, retention, reconciliation, stop };
}

/** Builds the service, then starts it: Event Mesh setup, HTTP listening, the loops and the AMQP consumer. */
export async function startService(
  config: Readonly<Config>,
  logger: Logger,
  options: StartOptions = {},
): Promise<Service> {
  const parts = await buildService(config, logger, options);
  try {
    if (config.eventMesh !== undefined && config.amqp !== undefined) {
      const created = await ensureEventMeshQueue({
        ...config.eventMesh,
        queue: config.amqp.queue,
        deadMessageQueue: `${config.amqp.queue}.dmq`,
      });
      logger.info(created, 'Event Mesh queue and subscriptions in place');
    }
    const url = await parts.app.listen({ host: options.host ?? '0.0.0.0', port: config.port });
    parts.mailSender.start();
    parts.portalSender?.start();
    parts.retention.start();
    parts.reconciliation?.start();
    parts.amqp?.start();
    logger.info({ url, ingest: config.ingest }, 'fleet order notifier started');
    return { ...parts, url };
  } catch (err) {
    // A failed start leaves nothing open behind it.
    await parts.stop();
    throw err;
  }
}
