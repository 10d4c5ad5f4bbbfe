// Composition root: config → pool → migrate → clients → handler → ingest → HTTP, built apart from started;
// and the one ordered shutdown.
import { setGlobalLogLevel } from '@sap-cloud-sdk/util';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { migrateAtStart } from './db/migrate.js';
import { applyEffect } from './events/applyEffect.js';
import { createEventHandler, type HandleEvent } from './events/handleEvent.js';
import { type Refuse, refuse } from './events/refuse.js';
import { adminRoutes } from './http/adminRoutes.js';
import { buildApp } from './http/app.js';
import { createNoAuth, createXsuaaAuth } from './http/auth.js';
import { requireEventHubToken } from './http/eventHubAuth.js';
import { eventHubRoutes } from './http/eventHubRoutes.js';
import { createHealthCheck } from './http/health.js';
import { webhookRoutes } from './http/webhookRoutes.js';
import { createRetention, type Retention } from './maintenance/retention.js';
import { amqpClientOptions } from './messaging/amqpClientOptions.js';
import { type AmqpConsumer, createAmqpConsumer } from './messaging/amqpConsumer.js';
import { ensureEventMeshQueue } from './messaging/eventMeshSetup.js';
import { createMetrics } from './metrics.js';
import { createMailSender, type MailSender } from './notifications/mailSender.js';
import { directoryTransport, type MailTransport, smtpTransport } from './notifications/mailTransport.js';
import { createPortalApi } from './portal/portalApi.js';
import { createPortalSender, type PortalSender } from './portal/portalSender.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
import { batchReads } from './s4/batchedReads.js';
import { createSalesOrderApi } from './s4/salesOrderApi.js';
import { shutdownInOrder } from './shutdown.js';
import { startTracing } from './tracing.js';

/** The service's parts, built and wired but not started: nothing listens, polls or consumes yet. */
export interface ServiceParts {
  app: FastifyInstance;
  pool: pg.Pool;
  handle: HandleEvent;
  amqp: AmqpConsumer | undefined;
  mailSender: MailSender;
  /** Pushes order states to the portal's API; undefined when PORTAL_DESTINATION is unset. */
  portalSender: PortalSender | undefined;
  retention: Retention;
  /** Ordered, time-boxed and memoised: closes whatever is open, started or not. */
  stop(): Promise<void>;
}

export interface Service extends ServiceParts {
  /** Where the HTTP server listens, e.g. http://127.0.0.1:8080. */
  url: string;
}

export interface BuildOptions {
  retryPolicy?: RetryPolicy;
  mailPollMs?: number;
}

export interface StartOptions extends BuildOptions {
  host?: string;
}

// Cloud Foundry sends SIGKILL 10 s after SIGTERM; leave room for the process to exit.
const SHUTDOWN_BUDGET_MS = 8000;

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

  const pool = new pg.Pool({ ...config.database, connectionTimeoutMillis: 5000 });
  // An idle connection dropped by a database restart must not crash the process; the pool replaces it.
  pool.on('error', (err) => logger.warn({ err }, 'idle database connection failed'));
  try {
    const applied = await migrateAtStart(pool, logger);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  } catch (err) {
    await pool.end();
    throw err;
  }

  // Off without an OTLP endpoint: then the OpenTelemetry SDK is never loaded and spans cost nothing.
  const tracing = config.tracing === undefined ? undefined : await startTracing(config.tracing);

  const metrics = createMetrics(
    pool,
    config.retention.processedEventDays,
    // Read at scrape time, after the consumer below exists.
    config.amqp === undefined ? {} : { amqpAttached: () => amqp?.isAttached() === true },
  );
  const retryPolicy = options.retryPolicy ?? DEFAULT_RETRY;
  const readOrder = batchReads(createSalesOrderApi(config.s4), {
    maxConcurrent: config.s4.maxConcurrentReads,
    batchSize: config.s4.readBatch,
    // An event waits out a pause as long as its own retries of a slow S/4HANA could have held it.
    maxWaitMs: retryPolicy.attempts * (config.s4.timeoutMs + retryPolicy.maxDelayMs),
    logger: logger.child({ component: 's4' }),
    observe: metrics.observeS4,
    onPause: metrics.s4Paused,
  });

  const transport: MailTransport =
    config.mail.transport.kind === 'smtp'
      ? smtpTransport(config.mail.transport.url)
      : directoryTransport(config.mail.transport.dir);
  const mailSender = createMailSender({
    pool,
    transport,
    from: config.mail.from,
    locale: config.mail.locale,
    portalOrderUrl: config.mail.portalOrderUrl,
    logger: logger.child({ component: 'mail' }),
    onResult: metrics.mail,
    pollMs: options.mailPollMs,
    leaseSeconds: config.mail.leaseSeconds,
  });

  const portalSender =
    config.portal === undefined
      ? undefined
      : createPortalSender({
          pool,
          portal: createPortalApi(config.portal),
          logger: logger.child({ component: 'portal' }),
          onResult: metrics.portalPush,
          pollMs: options.mailPollMs,
          leaseSeconds: config.portal.leaseSeconds,
        });
  const pushToPortal = portalSender !== undefined;

  const effectMail = {
    to: config.mail.to,
    locale: config.mail.locale,
    messageIdDomain: config.mail.messageIdDomain,
  };
  const handle = createEventHandler({
    pool,
    readOrder,
    writeEffect: async (event, order) => {
      const effect = await applyEffect(pool, event, order, effectMail, pushToPortal);
      if (effect.pushQueued) portalSender?.wake();
      return effect;
    },
    retryPolicy,
    maxDeliveries: config.maxDeliveries,
    maxMessageBytes: config.maxMessageBytes,
    onMailQueued: () => mailSender.wake(),
    observe: metrics.observeEvent,
    logger,
  });

  // One refusal for both transports: the dead letter and the delivery count's reset in one transaction.
  const refuseMessage: Refuse = (letter, log) => refuse(pool, letter, log);

  const auth = config.auth.kind === 'xsuaa' ? createXsuaaAuth(config.auth.credentials) : createNoAuth();
  if (config.auth.kind === 'none')
    logger.warn('AUTH=none: the admin API and the Event Mesh webhook accept any caller; local runs only');

  const amqp =
    config.amqp === undefined
      ? undefined
      : createAmqpConsumer({
          client: amqpClientOptions(config.amqp),
          address: config.amqp.queue,
          handle,
          refuse: refuseMessage,
          logger: logger.child({ component: 'amqp' }),
          onReconnect: metrics.reconnect,
        });

  const plugins: Array<(app: FastifyInstance) => Promise<void> | void> = [(app) => auth.decorate(app)];
  if (config.ingest.includes('webhook')) {
    const webhookLogger = logger.child({ component: 'webhook' });
    plugins.push(
      webhookRoutes({
        handle,
        refuse: refuseMessage,
        auth,
        maxMessageBytes: config.maxMessageBytes,
        logger: webhookLogger,
      }),
    );
  }
  if (config.eventHub !== undefined) {
    plugins.push(
      eventHubRoutes({
        handle,
        refuse: refuseMessage,
        requireEventHub: requireEventHubToken(config.eventHub),
        maxMessageBytes: config.maxMessageBytes,
        logger: logger.child({ component: 'event-hub' }),
      }),
    );
  }
  // Replays take the same path as live messages.
  plugins.push(
    adminRoutes({
      pool,
      auth,
      handle,
      wakeMailSender: mailSender.wake,
      wakePortalSender: () => portalSender?.wake(),
    }),
  );
  const retention = createRetention({
    pool,
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

  // In this order: intake stops first (in-flight messages finish or are released; anything still unsettled
  // returns to the queue on disconnect, and webhook requests in flight answer before the server closes), then
  // the loops that write (a retention pass ends after its current batch), and the pool last.
  const stop = shutdownInOrder(
    [
      {
        name: 'readiness',
        share: 0,
        close: () => {
          ready = false;
          logger.info('shutting down');
        },
      },
      { name: 'intake', share: 0.7, close: (ms) => Promise.all([amqp?.stop(ms * 0.9), app.close()]) },
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
    ],
    SHUTDOWN_BUDGET_MS,
    logger,
  );

  return { app, pool, handle, amqp, mailSender, portalSender, retention, stop };
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
    parts.amqp?.start();
    logger.info({ url, ingest: config.ingest }, 'fleet order notifier started');
    return { ...parts, url };
  } catch (err) {
    // A failed start leaves nothing open behind it.
    await parts.stop();
    throw err;
  }
}
