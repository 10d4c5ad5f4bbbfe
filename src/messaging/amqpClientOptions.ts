// The AMQP client's options for the configured broker, with the flow control the consumer relies on.
import type { ClientOptions } from '@sap/xb-msg-amqp-v100';
import type { AmqpSettings } from '../config.js';

export function amqpClientOptions({ broker, prefetch }: AmqpSettings): ClientOptions {
  const connection: ClientOptions =
    broker.kind === 'eventMesh'
      ? // Event Mesh: AMQP 1.0 over WebSocket with an OAuth2 client-credentials token fetched on every connect.
        {
          uri: broker.uri,
          oa2: { endpoint: broker.tokenEndpoint, client: broker.clientId, secret: broker.clientSecret },
        }
      : {
          ...(broker.tls
            ? { tls: { host: broker.host, port: broker.port, servername: broker.host } }
            : { net: { host: broker.host, port: broker.port } }),
          sasl: { mechanism: 'PLAIN', user: broker.user, password: broker.password },
        };
  // Link credit alone does not bound unsettled messages in this client; the session window does.
  // Setting both to the prefetch bounds what the broker sends and what the service holds.
  return {
    ...connection,
    tune: { socketNoDelay: true },
    amqp: {
      incomingSessionWindow: prefetch,
      maxReceiverLinkCredit: prefetch,
      minReceiverLinkCredit: Math.max(1, Math.floor(prefetch / 2)),
    },
  };
}
