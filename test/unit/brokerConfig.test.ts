// The broker settings of each SAP event broker: Advanced Event Mesh by URL or by a user-provided `amqp` service
// (SASL PLAIN or, with a client certificate, SASL EXTERNAL), and Event Mesh standalone or in Integration Suite
// (client secret or X.509 binding credentials), as loadConfig reads them and the AMQP client receives them.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/loadConfig.js';
import { amqpClientOptions } from '../../src/messaging/amqpClientOptions.js';

const base = {
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  AMQP_QUEUE: 'queue://salesorder',
  SMTP_URL: 'smtp://127.0.0.1:2525',
  MAIL_TO: 'a@example.com',
  AUTH: 'none',
};
const CERT = '-----BEGIN CERTIFICATE-----\nMIIc\n-----END CERTIFICATE-----';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIk\n-----END PRIVATE KEY-----';

function vcap(services: Array<{ label: string; tags?: string[]; credentials: unknown }>): string {
  const labels = [...new Set(services.map((service) => service.label))];
  const byLabel = labels.map((label) => [label, services.filter((service) => service.label === label)]);
  return JSON.stringify(Object.fromEntries(byLabel));
}

function optionsOf(env: Record<string, string>) {
  const amqp = loadConfig({ ...base, ...env }).amqp;
  if (amqp === undefined) throw new Error('no AMQP settings');
  return amqpClientOptions(amqp);
}

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ ...base, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const meshCredentials = (oa2: Record<string, string>) => ({
  messaging: [
    {
      protocol: ['amqp10ws'],
      uri: 'wss://fleet.eu10.a.eventmesh.integration.cloud.sap/protocols/amqp10ws',
      oa2: {
        clientid: 'cid',
        tokenendpoint: 'https://fleet.authentication.cert.eu10.hana.ondemand.com/oauth/token',
        ...oa2,
      },
    },
  ],
});

describe('Advanced Event Mesh over AMQP 1.0', () => {
  it('logs in with SASL PLAIN over TLS with the URL user and password, verifying the broker certificate', () => {
    expect(optionsOf({ AMQP_URL: 'amqps://fleet-user:s%40cret@aem.example:5671' })).toMatchObject({
      tls: { host: 'aem.example', port: 5671, servername: 'aem.example' },
      sasl: { mechanism: 'PLAIN', user: 'fleet-user', password: 's@cret' },
    });
    expect(optionsOf({ AMQP_URL: 'amqps://u:p@aem.example' }).tls).not.toHaveProperty('rejectUnauthorized');
  });

  it('logs in with SASL EXTERNAL, the certificate in the TLS handshake, when AMQP_CLIENT_CERT and AMQP_CLIENT_KEY are set', () => {
    const options = optionsOf({
      AMQP_URL: 'amqps://aem.example',
      AMQP_CLIENT_CERT: CERT,
      AMQP_CLIENT_KEY: KEY,
    });
    expect(options.tls).toMatchObject({ host: 'aem.example', cert: CERT, key: KEY });
    expect(options.sasl).toEqual({ mechanism: 'EXTERNAL' });
  });

  it('refuses a client certificate without TLS, or without its key, or that is not PEM', () => {
    expect(
      problemsOf({ AMQP_URL: 'amqp://aem.example', AMQP_CLIENT_CERT: CERT, AMQP_CLIENT_KEY: KEY }),
    ).toEqual(['a client certificate (SASL EXTERNAL) needs TLS: AMQP_URL must use amqps:']);
    expect(problemsOf({ AMQP_URL: 'amqps://aem.example', AMQP_CLIENT_CERT: CERT })).toEqual([
      'AMQP_CLIENT_KEY must be PEM text (set both for SASL EXTERNAL, or neither)',
    ]);
    expect(
      problemsOf({ AMQP_URL: 'amqps://aem.example', AMQP_CLIENT_CERT: 'cert.pem', AMQP_CLIENT_KEY: KEY }),
    ).toEqual(['AMQP_CLIENT_CERT must be PEM text (set both for SASL EXTERNAL, or neither)']);
  });

  it('reads a user-provided service with tag amqp: uri, username and password', () => {
    const VCAP_SERVICES = vcap([
      {
        label: 'user-provided',
        tags: ['amqp'],
        credentials: { uri: 'amqps://aem.example:5671', username: 'fleet', password: 'pw' },
      },
    ]);
    expect(optionsOf({ VCAP_SERVICES })).toMatchObject({
      tls: { host: 'aem.example', port: 5671 },
      sasl: { mechanism: 'PLAIN', user: 'fleet', password: 'pw' },
    });
  });

  it('reads a user-provided service with tag amqp: uri, certificate, key and ca, for SASL EXTERNAL', () => {
    const CA = '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n';
    const VCAP_SERVICES = vcap([
      {
        label: 'user-provided',
        tags: ['amqp'],
        credentials: { uri: 'amqps://aem.example:5671', certificate: CERT, key: KEY, ca: CA },
      },
    ]);
    const options = optionsOf({ VCAP_SERVICES });
    expect(options.sasl).toEqual({ mechanism: 'EXTERNAL' });
    expect(options.tls).toMatchObject({ cert: CERT, key: KEY });
    // The bound CA is trusted besides the system's, not instead of them.
    const ca = (options.tls as { ca: string[] }).ca;
    expect(ca.at(-1)).toBe(CA);
    expect(ca.length).toBeGreaterThan(1);
  });

  it('refuses two services tagged amqp, and one without uri', () => {
    const amqpService = { label: 'user-provided', tags: ['amqp'], credentials: { uri: 'amqps://a' } };
    expect(problemsOf({ VCAP_SERVICES: vcap([amqpService, amqpService]) })).toEqual([
      '2 services with tag "amqp" are bound; bind one',
    ]);
    expect(problemsOf({ VCAP_SERVICES: vcap([{ ...amqpService, credentials: { username: 'u' } }]) })).toEqual(
      ['the bound service with tag "amqp" lacks uri (amqps://host:port)'],
    );
  });
});

describe('Event Mesh in SAP Integration Suite', () => {
  it('finds the binding labelled event-mesh-message-client, with a client secret', () => {
    const VCAP_SERVICES = vcap([
      { label: 'event-mesh-message-client', credentials: meshCredentials({ clientsecret: 'cs' }) },
    ]);
    expect(optionsOf({ VCAP_SERVICES })).toMatchObject({
      uri: 'wss://fleet.eu10.a.eventmesh.integration.cloud.sap/protocols/amqp10ws',
      oa2: { client: 'cid', secret: 'cs' },
    });
  });

  it('fetches the token over mTLS with the X.509 binding credentials, sending no secret', () => {
    const VCAP_SERVICES = vcap([
      {
        label: 'event-mesh-message-client',
        credentials: meshCredentials({ certificate: CERT, key: KEY }),
      },
    ]);
    expect(optionsOf({ VCAP_SERVICES }).oa2).toEqual({
      endpoint: 'https://fleet.authentication.cert.eu10.hana.ondemand.com/oauth/token',
      client: 'cid',
      secret: '',
      request: { timeout: 15_000, cert: CERT, key: KEY },
    });
  });

  it('refuses to start when both enterprise-messaging and event-mesh-message-client are bound', () => {
    const credentials = meshCredentials({ clientsecret: 'cs' });
    const VCAP_SERVICES = vcap([
      { label: 'enterprise-messaging', credentials },
      { label: 'event-mesh-message-client', credentials },
    ]);
    expect(problemsOf({ VCAP_SERVICES })).toEqual([
      'both enterprise-messaging and event-mesh-message-client services are bound; bind the one Event Mesh the queue lives in',
    ]);
  });

  it('names a binding that has neither a client secret nor a certificate and key', () => {
    const VCAP_SERVICES = vcap([{ label: 'event-mesh-message-client', credentials: meshCredentials({}) }]);
    expect(problemsOf({ VCAP_SERVICES })).toEqual([
      "the bound event-mesh-message-client service's amqp10ws oa2 has neither clientsecret nor certificate and key",
    ]);
  });
});
