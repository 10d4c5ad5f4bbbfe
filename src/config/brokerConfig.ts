// Where AMQP events come from: the broker (by URL, a user-provided `amqp` service, or Event Mesh), the queue,
// and, with EVENT_MESH_SETUP, the Event Mesh queue and subscriptions the service creates at start. Read only
// when events come over AMQP: a webhook-only start never fails on broker settings.

import type { EventMeshManagement } from '../messaging/eventMeshSetup.js';
import { amqpServiceCredentials, managementOf } from './boundServices.js';
import type { EnvReader } from './envReader.js';

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

export interface EventMeshSetup {
  management: EventMeshManagement;
  topics: string[];
  maxRedeliveryCount: number;
}

export function brokerConfig(read: EnvReader): {
  amqp: AmqpSettings | undefined;
  eventMesh: EventMeshSetup | undefined;
} {
  const { problems } = read;
  const prefetch = read.int('AMQP_PREFETCH', 50, 1, 5000);
  const queue = read.optional('AMQP_QUEUE');
  if (queue === undefined) problems.push('AMQP_QUEUE is required when INGEST includes amqp');
  const amqpUrl = read.optional('AMQP_URL');
  const meshes = EVENT_MESH_LABELS.filter((label) => read.bound(label) !== undefined);
  if (meshes.length > 1)
    problems.push(
      `both ${meshes.join(' and ')} services are bound; bind the one Event Mesh the queue lives in`,
    );
  const messaging = meshes.length === 1 ? read.bound(meshes[0] as string) : undefined;
  const tagged = read.tagged('amqp');
  if (tagged.length > 1) problems.push(`${tagged.length} services with tag "amqp" are bound; bind one`);
  const clientCertificate = pemPair(
    read.optional('AMQP_CLIENT_CERT'),
    read.optional('AMQP_CLIENT_KEY'),
    problems,
  );
  let broker: AmqpBroker | undefined;
  if (amqpUrl !== undefined) broker = fromAmqpUrl(amqpUrl, clientCertificate, problems);
  else if (tagged[0] !== undefined) broker = fromAmqpService(tagged[0].credentials, problems);
  else if (messaging !== undefined) broker = fromEventMesh(messaging, meshes[0] as string, problems);
  let amqp: AmqpSettings | undefined;
  if (broker === undefined) {
    if (amqpUrl === undefined && tagged.length === 0 && meshes.length === 0)
      problems.push(
        'AMQP_URL is not set and no AMQP broker is bound (a user-provided service with tag "amqp", or enterprise-messaging or event-mesh-message-client)',
      );
  } else if (queue !== undefined) {
    amqp = { broker, queue, prefetch };
  }
  let eventMesh: EventMeshSetup | undefined;
  if (read.optional('EVENT_MESH_SETUP') === 'true') {
    const management = managementOf(messaging);
    if (management === undefined)
      problems.push(
        'EVENT_MESH_SETUP=true needs a bound enterprise-messaging or event-mesh-message-client service',
      );
    const topics = read.list('EVENT_MESH_TOPICS');
    if (topics.length === 0) problems.push('EVENT_MESH_SETUP=true needs EVENT_MESH_TOPICS');
    const maxRedeliveryCount = read.int('EVENT_MESH_MAX_REDELIVERY', 10, 1, 100);
    if (management !== undefined) eventMesh = { management, topics, maxRedeliveryCount };
  }
  return { amqp, eventMesh };
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

/**
 * Event Mesh: the binding's AMQP 1.0 over WebSocket entry, with its OAuth2 client credentials: a client secret,
 * or (X.509 binding credentials, `credential-type: x509`) a certificate and key for mTLS to the token endpoint.
 */
function fromEventMesh(
  credentials: Record<string, unknown>,
  label: string,
  problems: string[],
): AmqpBroker | undefined {
  type Entry = { protocol?: string[]; uri?: string; oa2?: Record<string, string> };
  const entries = (credentials.messaging ?? []) as Entry[];
  const entry = entries.find((candidate) => candidate.protocol?.includes('amqp10ws'));
  if (entry?.uri === undefined || entry.oa2 === undefined) {
    problems.push(`the bound ${label} service has no messaging entry with protocol amqp10ws, uri and oa2`);
    return undefined;
  }
  const { tokenendpoint, clientid, clientsecret, certificate, key } = entry.oa2;
  const x509 = typeof certificate === 'string' && typeof key === 'string';
  if (!x509 && typeof clientsecret !== 'string') {
    problems.push(
      `the bound ${label} service's amqp10ws oa2 has neither clientsecret nor certificate and key`,
    );
    return undefined;
  }
  return {
    kind: 'eventMesh',
    uri: entry.uri,
    tokenEndpoint: String(tokenendpoint),
    clientId: String(clientid),
    clientSecret: x509 ? '' : String(clientsecret),
    ...(x509 && { clientCertificate: { cert: certificate, key } }),
  };
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
