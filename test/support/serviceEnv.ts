import { AMQP_URL } from './services.js';

export interface LocalEndpoints {
  databaseUrl: string;
  s4Url: string;
  smtpUrl: string;
  /** Consume from this AMQP address; without it the service takes events by webhook only. */
  queueAddress?: string;
  /** Name of the S/4HANA destination (default S4HANA). */
  destination?: string;
}

/**
 * The environment of a service wired to the local stand-ins, as its operators would write it: configuration
 * keys plus the SAP Cloud SDK's `destinations` variable. Tests, the crash suite and the benchmark add their own
 * settings on top.
 */
export function serviceEnv(endpoints: LocalEndpoints): Record<string, string> {
  const destination = endpoints.destination ?? 'S4HANA';
  return {
    PORT: '0',
    DATABASE_URL: endpoints.databaseUrl,
    ...(endpoints.queueAddress === undefined
      ? { INGEST: 'webhook' }
      : { INGEST: 'amqp', AMQP_URL, AMQP_QUEUE: endpoints.queueAddress }),
    S4_DESTINATION: destination,
    destinations: JSON.stringify([{ name: destination, url: endpoints.s4Url }]),
    SMTP_URL: endpoints.smtpUrl,
    MAIL_FROM: 'notifier@fleet.example',
    MAIL_TO: 'fleet-manager@fleet.example',
    AUTH: 'none',
  };
}
