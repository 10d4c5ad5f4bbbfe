// The local RabbitMQ's AMQP-over-TLS listener (Advanced Event Mesh's transport) and the CA and certificates
// scripts/ensure-rabbitmq-tls.sh made for it. The one place tests learn those paths.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const BROKER_TLS_DIR = process.env.TEST_BROKER_TLS_DIR ?? '/var/lib/fleet-order-notifier-tls';
export const BROKER_TLS_PORT = 5671;
/** The RabbitMQ user the client certificate's common name logs in as (SASL EXTERNAL). */
export const CLIENT_CERT_USER = 'fleet-order-notifier-client';

export interface BrokerTls {
  /** Path of the CA that signed the broker's certificate (for NODE_EXTRA_CA_CERTS). */
  caPath: string;
  clientCert: string;
  clientKey: string;
}

export function brokerTls(): BrokerTls {
  const path = (name: string) => join(BROKER_TLS_DIR, name);
  const missing = ['ca.pem', 'client.pem', 'client.key'].filter((name) => !existsSync(path(name)));
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(', ')} missing in ${BROKER_TLS_DIR}: run "bash scripts/ensure-services.sh" (it calls scripts/ensure-rabbitmq-tls.sh) to give RabbitMQ its TLS listener on ${BROKER_TLS_PORT}`,
    );
  }
  return {
    caPath: path('ca.pem'),
    clientCert: readFileSync(path('client.pem'), 'utf8'),
    clientKey: readFileSync(path('client.key'), 'utf8'),
  };
}
