// The only reader of process.env and of the bound services (VCAP_SERVICES, through @sap/xsenv).
// Every problem is collected and reported at once, so an operator fixes a deployment in one round.
import type { ClientOptions } from '@sap/xb-msg-amqp-v100';
import { filterServices } from '@sap/xsenv';
import type { PoolConfig } from 'pg';
import type { ConfigKey } from './configKeys.js';
import type { XsuaaCredentials } from './http/auth.js';
import type { EventMeshManagement } from './messaging/eventMeshSetup.js';

export type Ingest = 'amqp' | 'webhook';

export interface Config {
  port: number;
  logLevel: string;
  database: PoolConfig;
  ingest: ReadonlySet<Ingest>;
  amqp: { client: ClientOptions; queue: string; prefetch: number } | undefined;
  s4: { destination: string; timeoutMs: number };
  mail: {
    smtpUrl: string | undefined;
    dir: string | undefined;
    from: string;
    to: string[];
    leaseSeconds: number;
  };
  maxDeliveries: number;
  maxMessageBytes: number;
  retention: { processedEventDays: number; mailDays: number };
  auth: { kind: 'xsuaa'; credentials: XsuaaCredentials } | { kind: 'none' };
  eventMesh: { management: EventMeshManagement; topics: string[]; maxRedeliveryCount: number } | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n- ${problems.join('\n- ')}`);
  }
}

type Env = Partial<Record<ConfigKey, string>>;

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = [];
  const text = (key: ConfigKey, fallback?: string): string | undefined => {
    const value = env[key]?.trim();
    return value === undefined || value === '' ? fallback : value;
  };
  const int = (key: ConfigKey, fallback: number, min: number, max: number): number => {
    const raw = text(key);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (Number.isInteger(value) && value >= min && value <= max) return value;
    problems.push(`${key} must be an integer from ${min} to ${max}, got "${raw}"`);
    return fallback;
  };
  const list = (key: ConfigKey): string[] =>
    (text(key) ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  const bound = (label: string): Record<string, unknown> | undefined => {
    const services = filterServices({ label });
    if (services.length > 1)
      problems.push(`${services.length} services with label "${label}" are bound; bind one`);
    return services[0]?.credentials;
  };

  const ingest = new Set<Ingest>();
  for (const kind of list('INGEST').length > 0 ? list('INGEST') : ['amqp']) {
    if (kind === 'amqp' || kind === 'webhook') ingest.add(kind);
    else problems.push(`INGEST takes "amqp", "webhook" or both comma-separated, got "${kind}"`);
  }

  const prefetch = int('AMQP_PREFETCH', 50, 1, 5000);
  let amqp: Config['amqp'];
  let eventMesh: Config['eventMesh'];
  if (ingest.has('amqp')) {
    const queue = text('AMQP_QUEUE');
    if (queue === undefined) problems.push('AMQP_QUEUE is required when INGEST includes amqp');
    const amqpUrl = text('AMQP_URL');
    const messaging = amqpUrl === undefined ? bound('enterprise-messaging') : undefined;
    const connection = amqpUrl !== undefined ? fromAmqpUrl(amqpUrl, problems) : fromEventMesh(messaging);
    if (connection === undefined) {
      problems.push('AMQP_URL is not set and no enterprise-messaging service is bound');
    } else if (queue !== undefined) {
      amqp = { client: withFlowControl(connection, prefetch), queue, prefetch };
    }
    if (text('EVENT_MESH_SETUP') === 'true') {
      const management = (messaging?.management as EventMeshManagement[] | undefined)?.[0];
      if (management === undefined)
        problems.push('EVENT_MESH_SETUP=true needs a bound enterprise-messaging service');
      const topics = list('EVENT_MESH_TOPICS');
      if (topics.length === 0) problems.push('EVENT_MESH_SETUP=true needs EVENT_MESH_TOPICS');
      const maxRedeliveryCount = int('EVENT_MESH_MAX_REDELIVERY', 10, 1, 100);
      if (management !== undefined) eventMesh = { management, topics, maxRedeliveryCount };
    }
  }

  const database = databaseConfig(text('DATABASE_URL'), () => bound('postgresql-db'), problems);
  database.max = int('DATABASE_POOL_SIZE', 20, 1, 100);

  const smtpUrl = text('SMTP_URL');
  const dir = text('MAIL_DIR');
  if ((smtpUrl === undefined) === (dir === undefined)) {
    problems.push('set exactly one of SMTP_URL (send by SMTP) and MAIL_DIR (write .eml files)');
  }
  const from = text('MAIL_FROM', 'fleet-order-notifier@localhost') as string;
  const to = list('MAIL_TO');
  if (to.length === 0) problems.push('MAIL_TO needs at least one recipient');

  let auth: Config['auth'] = { kind: 'none' };
  const authKind = text('AUTH', 'xsuaa');
  if (authKind === 'xsuaa') {
    const credentials = bound('xsuaa');
    const missing = ['clientid', 'xsappname', 'uaadomain', 'url'].filter(
      (k) => typeof credentials?.[k] !== 'string',
    );
    if (credentials === undefined)
      problems.push('AUTH=xsuaa needs a bound xsuaa service (AUTH=none for local runs)');
    else if (missing.length > 0) problems.push(`the bound xsuaa service lacks ${missing.join(', ')}`);
    else auth = { kind: 'xsuaa', credentials: credentials as unknown as XsuaaCredentials };
  } else if (authKind !== 'none') {
    problems.push(`AUTH takes "xsuaa" or "none", got "${authKind}"`);
  }

  const config: Config = {
    port: int('PORT', 8080, 0, 65535),
    logLevel: text('LOG_LEVEL', 'info') as string,
    database,
    ingest,
    amqp,
    s4: {
      destination: text('S4_DESTINATION', 'S4HANA') as string,
      timeoutMs: int('S4_TIMEOUT_MS', 5000, 100, 120_000),
    },
    // How long a claimed mail is reserved for its sender: after a crash mid-send it goes again this much later.
    // Must outlast the slowest send (the SMTP transport's connection, greeting and socket timeouts: 50 s).
    mail: { smtpUrl, dir, from, to, leaseSeconds: int('MAIL_LEASE_SECONDS', 120, 5, 3600) },
    maxDeliveries: int('MAX_DELIVERIES', 10, 1, 1000),
    maxMessageBytes: int('MAX_MESSAGE_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    retention: {
      processedEventDays: int('DEDUP_RETENTION_DAYS', 7, 1, 365),
      mailDays: int('MAIL_RETENTION_DAYS', 30, 1, 3650),
    },
    auth,
    eventMesh,
  };
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

function fromAmqpUrl(raw: string, problems: string[]): ClientOptions | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.push('AMQP_URL is not a URL (expected amqp://user:password@host:port)');
    return undefined;
  }
  if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:') {
    problems.push(`AMQP_URL must use amqp: or amqps:, got "${url.protocol}"`);
    return undefined;
  }
  const host = url.hostname;
  const port = Number(url.port || (url.protocol === 'amqps:' ? 5671 : 5672));
  const sasl = {
    mechanism: 'PLAIN',
    user: decodeURIComponent(url.username || 'guest'),
    password: decodeURIComponent(url.password || 'guest'),
  };
  return url.protocol === 'amqps:'
    ? { tls: { host, port, servername: host }, sasl }
    : { net: { host, port }, sasl };
}

/** Event Mesh: AMQP 1.0 over WebSocket with an OAuth2 client-credentials token fetched on every connect. */
function fromEventMesh(credentials: Record<string, unknown> | undefined): ClientOptions | undefined {
  type Entry = { protocol?: string[]; uri?: string; oa2?: Record<string, string> };
  const entries = (credentials?.messaging ?? []) as Entry[];
  const entry = entries.find((candidate) => candidate.protocol?.includes('amqp10ws'));
  if (entry?.uri === undefined || entry.oa2 === undefined) return undefined;
  const { tokenendpoint, clientid, clientsecret } = entry.oa2;
  return {
    uri: entry.uri,
    oa2: { endpoint: String(tokenendpoint), client: String(clientid), secret: String(clientsecret) },
  };
}

// Link credit alone does not bound unsettled messages in this client; the session window does.
// Setting both to the prefetch bounds what the broker sends and what the service holds.
function withFlowControl(options: ClientOptions, prefetch: number): ClientOptions {
  return {
    ...options,
    tune: { socketNoDelay: true },
    amqp: {
      incomingSessionWindow: prefetch,
      maxReceiverLinkCredit: prefetch,
      minReceiverLinkCredit: Math.max(1, Math.floor(prefetch / 2)),
    },
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
