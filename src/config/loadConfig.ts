// The only reader of the environment, bound services (VCAP_SERVICES) included: loadConfig composes one module
// per concern beside it. Every problem is collected and reported at once, so an operator fixes a
// deployment in one round. The result is plain data: what to connect to and how, not client objects (the AMQP
// client options, for one, are built in src/messaging/). What each bound service's credentials mean is read in
// boundServices.ts.
import type { PoolConfig } from 'pg';
import type { EventHubAuthSettings } from '../http/eventHubAuth.js';
import type { TracingConfig } from '../telemetry/tracing.js';
import { type AmqpSettings, brokerConfig, type EventMeshSetup } from './brokerConfig.js';
import { databaseConfig } from './databaseConfig.js';
import { type Env, envReader } from './envReader.js';
import { type AuthSettings, httpConfig } from './httpConfig.js';
import { type Ingest, ingestConfig } from './ingestConfig.js';
import { type MailSettings, mailConfig } from './mailConfig.js';
import { type PortalSettings, portalConfig } from './portalConfig.js';
import { type ReconcileSettings, reconcileConfig } from './reconcileConfig.js';
import { type S4Settings, s4Config } from './s4Config.js';
import { type SalesOrderSettings, salesOrderConfig } from './salesOrderConfig.js';
import { tracingConfig } from './tracingConfig.js';
import { type CustomerReturnSettings, customerReturnConfig } from './warrantyConfig.js';

export interface Config {
  port: number;
  logLevel: string;
  database: PoolConfig;
  ingest: readonly Ingest[];
  amqp: AmqpSettings | undefined;
  s4: S4Settings;
  /** The event families' own settings. */
  salesOrder: SalesOrderSettings;
  customerReturn: CustomerReturnSettings;
  mail: MailSettings;
  /** Pushing each order's state to the portal's HTTP API; undefined (PORTAL_DESTINATION unset): no push. */
  portal: PortalSettings | undefined;
  /** Reconciliation against S/4HANA; undefined (S4_SOURCE unset): off. */
  reconcile: ReconcileSettings | undefined;
  maxDeliveries: number;
  maxMessageBytes: number;
  retention: { processedEventDays: number; mailDays: number; intervalSeconds: number };
  auth: AuthSettings;
  eventMesh: EventMeshSetup | undefined;
  /** With `event-hub` in INGEST: who may push to /event-hub/events (whatever AUTH says). */
  eventHub: EventHubAuthSettings | undefined;
  /** OTLP trace export; undefined: no tracing, and the OpenTelemetry SDK is never loaded. */
  tracing: TracingConfig | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n- ${problems.join('\n- ')}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const read = envReader(env);
  const { problems } = read;
  const ingest = ingestConfig(read);
  // Broker settings are read only when events come over AMQP: a webhook-only start never fails on them.
  const { amqp, eventMesh } = ingest.includes('amqp')
    ? brokerConfig(read)
    : { amqp: undefined, eventMesh: undefined };
  const database = databaseConfig(read);
  const mail = mailConfig(read);
  const { port, auth, eventHub } = httpConfig(read, ingest);
  const logLevel = read.text('LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const s4 = s4Config(read);
  const portal = portalConfig(read);
  const reconcile = reconcileConfig(read);
  const tracing = tracingConfig(read);

  const config: Config = {
    port,
    logLevel,
    database,
    ingest,
    amqp,
    s4,
    salesOrder: salesOrderConfig(read),
    customerReturn: customerReturnConfig(read),
    mail,
    portal,
    reconcile,
    maxDeliveries: read.int('MAX_DELIVERIES', 10, 1, 1000),
    maxMessageBytes: read.int('MAX_MESSAGE_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    retention: {
      processedEventDays: read.int('DEDUP_RETENTION_DAYS', 7, 1, 365),
      mailDays: read.int('MAIL_RETENTION_DAYS', 30, 1, 3650),
      intervalSeconds: read.int('RETENTION_INTERVAL_SECONDS', 600, 1, 86_400),
    },
    auth,
    eventMesh,
    eventHub,
    tracing,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
