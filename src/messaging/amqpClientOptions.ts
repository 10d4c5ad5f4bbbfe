// The AMQP client's options for the configured broker, with the flow control the consumer relies on.
import { rootCertificates } from 'node:tls';
import type { ClientOptions } from '@sap/xb-msg-amqp-v100';
import type { AmqpBroker, AmqpSettings } from '../config/brokerConfig.js';
import { WINDOW_CEILING } from './creditWindow.js';

/**
 * `window`: the session window to open with; by default the fixed AMQP_PREFETCH, which also caps the link credit.
 * Without AMQP_PREFETCH the window adapts (creditWindow.ts), and the link credit must permit its ceiling.
 */
export function amqpClientOptions(
  { broker, prefetch }: AmqpSettings,
  window = prefetch ?? WINDOW_CEILING,
): ClientOptions {
  // Link credit alone does not bound unsettled messages in this client; the session window does, renewed by the
  // consumer as it settles (sessionWindow.ts). The link credit is the most the window can be, so it never runs
  // out before the window does: what the broker sends is bounded by the window, never cut by the credit.
  const credit = prefetch ?? WINDOW_CEILING;
  return {
    ...connectionOptions(broker),
    tune: { socketNoDelay: true },
    amqp: {
      incomingSessionWindow: window,
      maxReceiverLinkCredit: credit,
      minReceiverLinkCredit: Math.max(1, Math.floor(credit / 2)),
    },
  };
}

function connectionOptions(broker: AmqpBroker): ClientOptions {
  if (broker.kind === 'eventMesh') {
    // Event Mesh: AMQP 1.0 over WebSocket with an OAuth2 client-credentials token fetched on every connect.
    // X.509 binding credentials: the token request itself goes over mTLS with the binding's certificate.
    const mtls = broker.clientCertificate;
    return {
      uri: broker.uri,
      oa2: {
        endpoint: broker.tokenEndpoint,
        client: broker.clientId,
        secret: broker.clientSecret,
        ...(mtls && { request: { timeout: 15_000, cert: mtls.cert, key: mtls.key } }),
      },
    };
  }
  if (!broker.tls) {
    return {
      net: { host: broker.host, port: broker.port },
      sasl: { mechanism: 'PLAIN', user: broker.user, password: broker.password },
    };
  }
  // TLS verifies the broker's certificate: against the system CAs and NODE_EXTRA_CA_CERTS, or, with a bound
  // `ca`, against the system CAs and that one (an explicit list replaces Node's default store). A client
  // certificate goes into the handshake and SASL EXTERNAL tells the broker to take the identity from it.
  const certificate = broker.clientCertificate;
  return {
    tls: {
      host: broker.host,
      port: broker.port,
      servername: broker.host,
      ...(broker.ca !== undefined && { ca: [...rootCertificates, broker.ca] }),
      ...(certificate && { cert: certificate.cert, key: certificate.key }),
    },
    sasl: certificate
      ? { mechanism: 'EXTERNAL' }
      : { mechanism: 'PLAIN', user: broker.user, password: broker.password },
  };
}
