// Composition root: config → pool → migrate → clients → handler → ingest → HTTP; and the one shutdown.
import { setGlobalLogLevel } from '@sap-cloud-sdk/util';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { migrateAtStart } from './db/migrate.js';
import { recordDeadLetter } from './events/deadLetter.js';
import { createEventHandler } from './events/handleEvent.js';
import { adminRoutes } from './http/adminRoutes.js';
import { buildApp } from './http/app.js';
import { createNoAuth, createXsuaaAuth } from './http/auth.js';
import { checkHealth } from './http/health.js';
import { webhookRoutes } from './http/webhookRoutes.js';
import { createRetention } from './maintenance/retention.js';
import { amqpClientOptions } from './messaging/amqpClientOptions.js';
import { type AmqpConsumer, createAmqpConsumer } from './messaging/amqpConsumer.js';
import { ensureEventMeshQueue } from './messaging/eventMeshSetup.js';
import { createMetrics } from './metrics.js';
import { createMailSender } from './notifications/mailSender.js';
import { directoryTransport, type MailTransport, smtpTransport } from './notifications/mailTransport.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
import { createSalesOrderApi, type SalesOrderApi } from './s4/salesOrderApi.js';
import { shareReads } from './s4/sharedReads.js';

export interface Service {
  app: FastifyInstance;
  pool: pg.Pool;
  amqp: AmqpConsumer | undefined;
  /** Where the HTTP server listens, e.g. http://127.0.0.1:8080. */
  url: string;
  /** Ordered, time-boxed and memoised: safe to call from several signals at once. */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  host?: string;
  retryPolicy?: RetryPolicy;
  mailPollMs?: number;
}

// Cloud Foundry sends SIGKILL 10 s after SIGTERM; leave room for the process to exit.
const SHUTDOWN_BUDGET_MS = 8000;

export async function startService(
  config: Readonly<Config>,
  logger: Logger,
  options: ServiceOptions = {},
): Promise<Service> {
  // The SDK logs every destination lookup at info level, in its own format: keep only its errors.
  setGlobalLogLevel('error');

  const pool = new pg.Pool({ ...config.database, connectionTimeoutMillis: 5000 });
  // An idle connection dropped by a database restart must not crash the process; the pool replaces it.
  pool.on('error', (err) => logger.warn({ err }, 'idle database connection failed'));
  const applied = await migrateAtStart(pool, logger);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');

  const metrics = createMetrics(pool, config.retention.processedEventDays);
  const readOrder = shareReads(timed(createSalesOrderApi(config.s4), metrics.observeS4));

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

  const handle = createEventHandler({
    pool,
    readOrder,
    retryPolicy: options.retryPolicy ?? DEFAULT_RETRY,
    maxDeliveries: config.maxDeliveries,
    maxMessageBytes: config.maxMessageBytes,
    mail: { to: config.mail.to, locale: config.mail.locale, messageIdDomain: config.mail.messageIdDomain },
    onMailQueued: () => mailSender.wake(),
    observe: metrics.observeEvent,
    logger,
  });

  const auth = config.auth.kind === 'xsuaa' ? createXsuaaAuth(config.auth.credentials) : createNoAuth();
  if (config.auth.kind === 'none')
    logger.warn('AUTH=none: the admin API and webhook accept any caller; local runs only');

  let amqp: AmqpConsumer | undefined;
  if (config.amqp !== undefined) {
    if (config.eventMesh !== undefined) {
      const created = await ensureEventMeshQueue({
        ...config.eventMesh,
        queue: config.amqp.queue,
        deadMessageQueue: `${config.amqp.queue}.dmq`,
      });
      logger.info(created, 'Event Mesh queue and subscriptions in place');
    }
    amqp = createAmqpConsumer({
      client: amqpClientOptions(config.amqp),
      address: config.amqp.queue,
      handle,
      recordDeadLetter: (letter) => recordDeadLetter(pool, letter),
      logger: logger.child({ component: 'amqp' }),
      onReconnect: metrics.reconnect,
    });
  }

  const plugins: Array<(app: FastifyInstance) => Promise<void> | void> = [(app) => auth.decorate(app)];
  if (config.ingest.includes('webhook')) {
    plugins.push(webhookRoutes({ handle, pool, auth, logger: logger.child({ component: 'webhook' }) }));
  }

  // Replays take the same path as live messages.
  plugins.push(adminRoutes({ pool, auth, handle, wakeMailSender: mailSender.wake }));
  const retention = createRetention({
    pool,
    logger: logger.child({ component: 'retention' }),
    processedEventDays: config.retention.processedEventDays,
    mailDays: config.retention.mailDays,
  });

  let ready = true;
  const app = await buildApp({
    logger,
    health: async () => {
      const report = await checkHealth(pool, amqp);
      return ready ? report : { ...report, ready: false };
    },
    metrics: metrics.registry,
    bodyLimit: config.maxMessageBytes * 2,
    plugins,
  });
  const url = await app.listen({ host: options.host ?? '0.0.0.0', port: config.port });
  mailSender.start();
  retention.start();
  amqp?.start();
  logger.info({ url, ingest: config.ingest }, 'fleet order notifier started');

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      const deadline = Date.now() + SHUTDOWN_BUDGET_MS;
      const step = async (name: string, work: () => Promise<unknown>, shareOfRest: number) => {
        const ms = Math.max(100, (deadline - Date.now()) * shareOfRest);
        const timer = new Promise((resolve) => setTimeout(resolve, ms, 'timeout').unref());
        const result = await Promise.race([
          work().catch((err) => logger.warn({ err }, `${name} failed`)),
          timer,
        ]);
        if (result === 'timeout') logger.warn({ ms }, `${name} did not finish in time`);
      };
      ready = false;
      logger.info('shutting down');
      // Both intakes stop together. In-flight messages finish or are released; anything still unsettled returns
      // to the queue on disconnect, and webhook requests in flight answer before the server closes.
      const grace = (deadline - Date.now()) * 0.6;
      await step('stopping intake', () => Promise.all([amqp?.stop(grace), app.close()]), 1);
      // A retention pass in progress ends after its current batch, well before the pool closes.
      await step(
        'stopping the mail sender and retention',
        () => Promise.all([mailSender.stop(), retention.stop()]),
        0.5,
      );
      transport.close();
      await step('closing the database pool', () => pool.end(), 1);
      logger.info('stopped');
      logger.flush();
    })();
    return stopping;
  };

  return { app, pool, amqp, url, stop };
}

/** Measures S/4HANA reads for /metrics without touching the client. */
function timed(
  api: SalesOrderApi,
  observe: (result: 'ok' | 'not_found' | 'error', s: number) => void,
): SalesOrderApi {
  return {
    async read(salesOrder) {
      const started = performance.now();
      try {
        const order = await api.read(salesOrder);
        observe(order === null ? 'not_found' : 'ok', (performance.now() - started) / 1000);
        return order;
      } catch (err) {
        observe('error', (performance.now() - started) / 1000);
        throw err;
      }
    },
  };
}
