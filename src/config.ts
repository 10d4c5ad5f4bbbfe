// The only reader of the environment, bound services (VCAP_SERVICES) included. Every problem is collected and
// reported at once, so an operator fixes a deployment in one round. The result is plain data: what to connect
// to and how, not client objects (the AMQP client options, for one, are built in src/messaging/). What each
// bound service's credentials mean is read in boundServices.ts, from what this module hands it.
import type { PoolConfig } from 'pg';
import {
  amqpServiceCredentials,
  boundServices,
  eventBrokerClientId,
  fromEventMesh,
  iasCredentials,
  isXsuaaCredentials,
  managementOf,
  XSUAA_FIELDS,
} from './boundServices.js';
import type { ConfigKey } from './configKeys.js';
import type { XsuaaCredentials } from './http/auth.js';
import type { EventHubAuthSettings } from './http/eventHubAuth.js';
import type { EventMeshManagement } from './messaging/eventMeshSetup.js';
import { LANGUAGES } from './notifications/catalogs.js';
import { catalogLanguage } from './notifications/messages.js';
import type { ApiVersion } from './s4/odataService.js';
import type { TracingConfig } from './tracing.js';

export type Ingest = 'amqp' | 'webhook' | 'event-hub';
const INGESTS: readonly Ingest[] = ['amqp', 'webhook', 'event-hub'];

/** A client certificate and its private key, PEM text. */
export interface ClientCertificate {
  cert: string;
  key: string;
}

/**
 * Where the AMQP 1.0 broker is: a broker by URL or a user-provided `amqp` service (RabbitMQ, Advanced Event
 * Mesh), or Event Mesh (standalone or in Integration Suite) over WebSocket with OAuth2.
 */
export type AmqpBroker =
  | {
      kind: 'plain';
      host: string;
      port: number;
      tls: boolean;
      user: string;
      password: string;
      /** With it, SASL EXTERNAL: the broker takes the identity from this certificate (TLS only). */
      clientCertificate?: ClientCertificate;
      /**
       * PEM of CAs trusted for the broker's certificate besides the system's (from a bound `amqp` service). TLS
       * then gets an explicit CA list, which leaves out NODE_EXTRA_CA_CERTS: the bound `ca` is the private one.
       */
      ca?: string;
    }
  | {
      kind: 'eventMesh';
      uri: string;
      tokenEndpoint: string;
      clientId: string;
      /** Empty with X.509 binding credentials: the certificate authenticates at the token endpoint. */
      clientSecret: string;
      clientCertificate?: ClientCertificate;
    };

/** Binding labels of Event Mesh: standalone, and Event Mesh in SAP Integration Suite. */
export const EVENT_MESH_LABELS = ['enterprise-messaging', 'event-mesh-message-client'] as const;

export interface AmqpSettings {
  broker: AmqpBroker;
  queue: string;
  /** Most unsettled messages held at once. */
  prefetch: number;
}

/** How mail leaves: by SMTP, or as .eml files written to a directory (local runs, the demo). */
export type MailTransportSettings = { kind: 'smtp'; url: string } | { kind: 'directory'; dir: string };

export interface Config {
  port: number;
  logLevel: string;
  database: PoolConfig;
  ingest: readonly Ingest[];
  amqp: AmqpSettings | undefined;
  s4: {
    destination: string;
    timeoutMs: number;
    version: ApiVersion;
    maxConcurrentReads: number;
    readBatch: number;
  };
  mail: {
    transport: MailTransportSettings;
    from: string;
    to: string[];
    /** The right-hand side of the Message-IDs the service writes: the sender's domain. */
    messageIdDomain: string;
    leaseSeconds: number;
    /** BCP 47 tag of a language with a catalog; mail_recipient.locale overrides it per sold-to party. */
    locale: string;
    /** URL template with `{salesOrder}`, or undefined: no link. */
    portalOrderUrl: string | undefined;
  };
  /** Pushing each order's state to the portal's HTTP API; undefined (PORTAL_DESTINATION unset): no push. */
  portal: { destination: string; timeoutMs: number; leaseSeconds: number } | undefined;
  maxDeliveries: number;
  maxMessageBytes: number;
  retention: { processedEventDays: number; mailDays: number; intervalSeconds: number };
  auth: { kind: 'xsuaa'; credentials: XsuaaCredentials } | { kind: 'none' };
  eventMesh: { management: EventMeshManagement; topics: string[]; maxRedeliveryCount: number } | undefined;
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

/** The configuration keys, and VCAP_SERVICES, which Cloud Foundry sets. */
type Env = Partial<Record<ConfigKey | 'VCAP_SERVICES', string>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = [];
  const optional = (key: ConfigKey): string | undefined => {
    const value = env[key]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const text = (key: ConfigKey, fallback: string): string => optional(key) ?? fallback;
  const int = (key: ConfigKey, fallback: number, min: number, max: number): number => {
    const raw = optional(key);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (Number.isInteger(value) && value >= min && value <= max) return value;
    problems.push(`${key} must be an integer from ${min} to ${max}, got "${raw}"`);
    return fallback;
  };
  const list = (key: ConfigKey): string[] =>
    text(key, '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  const services = boundServices(env.VCAP_SERVICES, problems);
  const bound = (label: string): Record<string, unknown> | undefined => {
    const matching = services.filter((service) => service.label === label);
    if (matching.length > 1)
      problems.push(`${matching.length} services with label "${label}" are bound; bind one`);
    return matching[0]?.credentials;
  };

  const ingest: Ingest[] = [];
  for (const kind of list('INGEST').length > 0 ? list('INGEST') : ['amqp']) {
    const known = INGESTS.find((candidate) => candidate === kind);
    if (known === undefined)
      problems.push(`INGEST takes "amqp", "webhook" and "event-hub", comma-separated, got "${kind}"`);
    else if (!ingest.includes(known)) ingest.push(known);
  }

  // Broker settings are read only when events come over AMQP: a webhook-only start never fails on them.
  let amqp: Config['amqp'];
  let eventMesh: Config['eventMesh'];
  if (ingest.includes('amqp')) {
    const prefetch = int('AMQP_PREFETCH', 50, 1, 5000);
    const queue = optional('AMQP_QUEUE');
    if (queue === undefined) problems.push('AMQP_QUEUE is required when INGEST includes amqp');
    const amqpUrl = optional('AMQP_URL');
    const meshes = EVENT_MESH_LABELS.filter((label) => bound(label) !== undefined);
    if (meshes.length > 1)
      problems.push(
        `both ${meshes.join(' and ')} services are bound; bind the one Event Mesh the queue lives in`,
      );
    const messaging = meshes.length === 1 ? bound(meshes[0] as string) : undefined;
    const tagged = services.filter((service) => service.tags?.includes('amqp') === true);
    if (tagged.length > 1) problems.push(`${tagged.length} services with tag "amqp" are bound; bind one`);
    const clientCertificate = pemPair(optional('AMQP_CLIENT_CERT'), optional('AMQP_CLIENT_KEY'), problems);
    let broker: AmqpBroker | undefined;
    if (amqpUrl !== undefined) broker = fromAmqpUrl(amqpUrl, clientCertificate, problems);
    else if (tagged[0] !== undefined) broker = fromAmqpService(tagged[0].credentials, problems);
    else if (messaging !== undefined) broker = fromEventMesh(messaging, meshes[0] as string, problems);
    if (broker === undefined) {
      if (amqpUrl === undefined && tagged.length === 0 && meshes.length === 0)
        problems.push(
          'AMQP_URL is not set and no AMQP broker is bound (a user-provided service with tag "amqp", or enterprise-messaging or event-mesh-message-client)',
        );
    } else if (queue !== undefined) {
      amqp = { broker, queue, prefetch };
    }
    if (optional('EVENT_MESH_SETUP') === 'true') {
      const management = managementOf(messaging);
      if (management === undefined)
        problems.push(
          'EVENT_MESH_SETUP=true needs a bound enterprise-messaging or event-mesh-message-client service',
        );
      const topics = list('EVENT_MESH_TOPICS');
      if (topics.length === 0) problems.push('EVENT_MESH_SETUP=true needs EVENT_MESH_TOPICS');
      const maxRedeliveryCount = int('EVENT_MESH_MAX_REDELIVERY', 10, 1, 100);
      if (management !== undefined) eventMesh = { management, topics, maxRedeliveryCount };
    }
  }

  const database = databaseConfig(optional('DATABASE_URL'), () => bound('postgresql-db'), problems);
  database.max = int('DATABASE_POOL_SIZE', 20, 1, 100);

  const smtpUrl = optional('SMTP_URL');
  const dir = optional('MAIL_DIR');
  let transport: MailTransportSettings = { kind: 'directory', dir: '' };
  if (smtpUrl !== undefined && dir === undefined) transport = { kind: 'smtp', url: smtpUrl };
  else if (dir !== undefined && smtpUrl === undefined) transport = { kind: 'directory', dir };
  else problems.push('set exactly one of SMTP_URL (send by SMTP) and MAIL_DIR (write .eml files)');
  const from = text('MAIL_FROM', 'fleet-order-notifier@localhost');
  const to = list('MAIL_TO');
  if (to.length === 0) problems.push('MAIL_TO needs at least one recipient');
  const locale = text('MAIL_LOCALE', 'en');
  if (catalogLanguage(locale) === undefined) {
    problems.push(
      `MAIL_LOCALE must be a language tag of ${LANGUAGES.join(', ')} (e.g. de or de-AT), got "${locale}"`,
    );
  }
  const portalOrderUrl = optional('PORTAL_ORDER_URL');
  if (portalOrderUrl !== undefined && !isUrlTemplate(portalOrderUrl)) {
    problems.push(
      `PORTAL_ORDER_URL must be an http(s) URL with {salesOrder} in it, e.g. https://portal.example.com/orders/{salesOrder}, got "${portalOrderUrl}"`,
    );
  }

  let auth: Config['auth'] = { kind: 'none' };
  const authKind = text('AUTH', 'xsuaa');
  if (authKind === 'xsuaa') {
    const credentials = bound('xsuaa');
    const missing = XSUAA_FIELDS.filter((k) => typeof credentials?.[k] !== 'string');
    if (credentials === undefined)
      problems.push('AUTH=xsuaa needs a bound xsuaa service (AUTH=none for local runs)');
    else if (!isXsuaaCredentials(credentials))
      problems.push(`the bound xsuaa service lacks ${missing.join(', ')}`);
    else auth = { kind: 'xsuaa', credentials };
  } else if (authKind !== 'none') {
    problems.push(`AUTH takes "xsuaa" or "none", got "${authKind}"`);
  }

  // Event Hub's pushes are authenticated by IAS whatever AUTH says: without both bindings, no start.
  let eventHub: Config['eventHub'];
  if (ingest.includes('event-hub')) {
    const identity = iasCredentials(bound('identity'), problems);
    const eventHubClientId = eventBrokerClientId(bound('event-broker'), problems);
    if (identity !== undefined && eventHubClientId !== undefined) eventHub = { identity, eventHubClientId };
  }

  const logLevel = text('LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const s4Api = text('S4_API', 'v2');
  if (s4Api !== 'v2' && s4Api !== 'v4') problems.push(`S4_API takes "v2" or "v4", got "${s4Api}"`);

  const portalDestination = optional('PORTAL_DESTINATION');
  const portalTimeoutMs = int('PORTAL_TIMEOUT_MS', 5000, 100, 120_000);
  const portalLeaseSeconds = int('PORTAL_LEASE_SECONDS', 15, 5, 3600);

  const tracing = tracingConfig(env, problems);

  const config: Config = {
    port: int('PORT', 8080, 0, 65535),
    logLevel,
    database,
    ingest,
    amqp,
    s4: {
      destination: text('S4_DESTINATION', 'S4HANA'),
      timeoutMs: int('S4_TIMEOUT_MS', 5000, 100, 120_000),
      version: s4Api === 'v4' ? 'v4' : 'v2',
      maxConcurrentReads: int('S4_MAX_CONCURRENT_READS', 4, 1, 64),
      readBatch: int('S4_READ_BATCH', 50, 1, 200),
    },
    mail: {
      transport,
      from,
      to,
      messageIdDomain: from.split('@')[1] || 'fleet-order-notifier',
      // How long a claimed mail is reserved for its sender, renewed every third of it while the send runs:
      // after a crash mid-send it goes again at most this much later. Short: renewal, not length, covers slow sends.
      leaseSeconds: int('MAIL_LEASE_SECONDS', 15, 5, 3600),
      locale,
      portalOrderUrl,
    },
    portal:
      portalDestination === undefined
        ? undefined
        : { destination: portalDestination, timeoutMs: portalTimeoutMs, leaseSeconds: portalLeaseSeconds },
    maxDeliveries: int('MAX_DELIVERIES', 10, 1, 1000),
    maxMessageBytes: int('MAX_MESSAGE_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    retention: {
      processedEventDays: int('DEDUP_RETENTION_DAYS', 7, 1, 365),
      mailDays: int('MAIL_RETENTION_DAYS', 30, 1, 3650),
      intervalSeconds: int('RETENTION_INTERVAL_SECONDS', 600, 1, 86_400),
    },
    auth,
    eventMesh,
    eventHub,
    tracing,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** The OpenTelemetry specification's exporter variables, as every OpenTelemetry SDK reads them. */
function tracingConfig(env: Env, problems: string[]): TracingConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const signal = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  // The signal's own variable is used as given; the base one gets the signal's path appended.
  const tracesUrl = signal || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (tracesUrl === undefined) return undefined;
  if (!/^https?:\/\/[^/]/.test(tracesUrl)) {
    problems.push(`the OTLP endpoint must be an http(s) URL, got "${tracesUrl}"`);
    return undefined;
  }
  const headers: Record<string, string> = {};
  for (const pair of (env.OTEL_EXPORTER_OTLP_HEADERS ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) {
      problems.push('OTEL_EXPORTER_OTLP_HEADERS takes key=value pairs, comma-separated');
      continue;
    }
    // Values are URL-encoded, as the OpenTelemetry specification says (W3C baggage format).
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      problems.push('OTEL_EXPORTER_OTLP_HEADERS has a malformed %-escape');
    }
  }
  return { tracesUrl, headers, serviceName: env.OTEL_SERVICE_NAME?.trim() || 'fleet-order-notifier' };
}

function isUrlTemplate(template: string): boolean {
  if (!template.includes('{salesOrder}')) return false;
  try {
    const url = new URL(template.replaceAll('{salesOrder}', '1000474'));
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function fromAmqpUrl(
  raw: string,
  clientCertificate: ClientCertificate | undefined,
  problems: string[],
  where = 'AMQP_URL',
): AmqpBroker | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.push(`${where} is not a URL (expected amqp://user:password@host:port)`);
    return undefined;
  }
  if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:') {
    problems.push(`${where} must use amqp: or amqps:, got "${url.protocol}"`);
    return undefined;
  }
  const tls = url.protocol === 'amqps:';
  if (clientCertificate !== undefined && !tls) {
    problems.push(`a client certificate (SASL EXTERNAL) needs TLS: ${where} must use amqps:`);
    return undefined;
  }
  return {
    kind: 'plain',
    host: url.hostname,
    port: Number(url.port || (tls ? 5671 : 5672)),
    tls,
    user: decodeURIComponent(url.username || 'guest'),
    password: decodeURIComponent(url.password || 'guest'),
    ...(clientCertificate && { clientCertificate }),
  };
}

/** A certificate and its key (AMQP_CLIENT_CERT and AMQP_CLIENT_KEY) come together or not at all. */
function pemPair(
  cert: string | undefined,
  key: string | undefined,
  problems: string[],
  [certName, keyName] = ['AMQP_CLIENT_CERT', 'AMQP_CLIENT_KEY'],
): ClientCertificate | undefined {
  if (cert === undefined && key === undefined) return undefined;
  const notPem = [
    cert?.includes('-----BEGIN') ? '' : certName,
    key?.includes('-----BEGIN') ? '' : keyName,
  ].filter((name) => name !== '');
  if (notPem.length > 0) {
    problems.push(`${notPem.join(' and ')} must be PEM text (set both for SASL EXTERNAL, or neither)`);
    return undefined;
  }
  return { cert: String(cert), key: String(key) };
}

/** A user-provided service tagged `amqp` (Advanced Event Mesh, say), read in boundServices.ts. */
function fromAmqpService(
  credentials: Record<string, unknown> | undefined,
  problems: string[],
): AmqpBroker | undefined {
  const bound = amqpServiceCredentials(credentials, problems);
  if (bound === undefined) return undefined;
  const clientCertificate = pemPair(bound.certificate, bound.key, problems, [
    'the "amqp" service certificate',
    'the "amqp" service key',
  ]);
  const broker = fromAmqpUrl(bound.uri, clientCertificate, problems, 'the "amqp" service uri');
  if (broker?.kind !== 'plain') return broker;
  return {
    ...broker,
    ...(bound.username !== undefined && { user: bound.username }),
    ...(bound.password !== undefined && { password: bound.password }),
    ...(bound.ca !== undefined && { ca: bound.ca }),
  };
}

function databaseConfig(
  url: string | undefined,
  boundCredentials: () => Record<string, unknown> | undefined,
  problems: string[],
): PoolConfig {
  if (url !== undefined) return { connectionString: url };
  const credentials = boundCredentials();
  if (credentials === undefined) {
    problems.push('DATABASE_URL is not set and no postgresql-db service is bound');
    return {};
  }
  return {
    host: String(credentials.hostname),
    port: Number(credentials.port), // the binding gives the port as a string
    database: String(credentials.dbname),
    user: String(credentials.username),
    password: String(credentials.password),
    // TLS with the binding's root certificate, verification kept on.
    ssl: { ca: String(credentials.sslrootcert), rejectUnauthorized: true },
  };
}
