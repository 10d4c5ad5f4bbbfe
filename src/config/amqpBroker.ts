// The AMQP broker as its settings name it: by URL (AMQP_URL), as a user-provided `amqp` service, or as a bound
// Event Mesh, with a client certificate where one is given. Every problem is added to `problems`.
import { amqpServiceCredentials } from './boundServices.js';

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

export function fromAmqpUrl(
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
export function pemPair(
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
export function fromEventMesh(
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
export function fromAmqpService(
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
