import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config/keys.js';
import { ConfigError, loadConfig } from '../../src/config/loadConfig.js';
import { amqpClientOptions } from '../../src/messaging/amqpClientOptions.js';
import { sourcesMatching } from '../support/sourceFiles.js';

const local = {
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  AMQP_URL: 'amqp://user:secret@broker:5673',
  AMQP_QUEUE: '/amq/queue/salesorder',
  SMTP_URL: 'smtp://127.0.0.1:2525',
  MAIL_TO: 'a@example.com, b@example.com',
  AUTH: 'none',
};

const xsuaaCredentials = {
  clientid: 'sb-x',
  xsappname: 'x',
  uaadomain: 'uaa.example',
  url: 'https://uaa.example',
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('configuration', () => {
  it('reads a local setup, with the defaults of port, pool size, message-ID domain, S/4HANA, retention and auth', () => {
    const config = loadConfig(local);
    expect(config.port).toBe(8080);
    expect(config.database).toMatchObject({ connectionString: local.DATABASE_URL, max: 20 });
    expect(config.amqp?.queue).toBe('/amq/queue/salesorder');
    expect(config.amqp?.broker).toEqual({
      kind: 'plain',
      host: 'broker',
      port: 5673,
      tls: false,
      user: 'user',
      password: 'secret',
    });
    expect(config.mail).toMatchObject({
      transport: { kind: 'smtp', url: local.SMTP_URL },
      to: ['a@example.com', 'b@example.com'],
      messageIdDomain: 'localhost',
    });
    expect(config.s4).toEqual({
      destination: 'S4HANA',
      timeoutMs: 5000,
      version: 'v2',
      maxConcurrentReads: 4,
      readBatch: 50,
    });
    expect(config.retention).toEqual({ processedEventDays: 7, mailDays: 30, intervalSeconds: 600 });
    expect(config.auth).toEqual({ kind: 'none' });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('defaults the delivery budget, message size, mail lease, log level and portal timeout and lease', () => {
    const config = loadConfig({ ...local, PORTAL_DESTINATION: 'PORTAL' });
    expect(config.maxDeliveries).toBe(10);
    expect(config.maxMessageBytes).toBe(1_048_576);
    expect(config.mail.leaseSeconds).toBe(15);
    expect(config.logLevel).toBe('info');
    expect(config.portal).toEqual({ destination: 'PORTAL', timeoutMs: 5000, leaseSeconds: 15 });
  });

  it('builds the AMQP client options of a plain broker from its URL', () => {
    const amqp = loadConfig(local).amqp;
    expect(amqp && amqpClientOptions(amqp)).toMatchObject({
      net: { host: 'broker', port: 5673 },
      sasl: { mechanism: 'PLAIN', user: 'user', password: 'secret' },
      tune: { socketNoDelay: true },
    });
    const tls = loadConfig({ ...local, AMQP_URL: 'amqps://broker.example' }).amqp;
    expect(tls && amqpClientOptions(tls)).toMatchObject({
      tls: { host: 'broker.example', port: 5671, servername: 'broker.example' },
    });
  });

  it('adapts the window without AMQP_PREFETCH, with link credit for its ceiling', () => {
    const amqp = loadConfig(local).amqp;
    expect(amqp?.prefetch).toBeUndefined();
    expect(amqp && amqpClientOptions(amqp, 50).amqp).toEqual({
      incomingSessionWindow: 50,
      maxReceiverLinkCredit: 200,
      minReceiverLinkCredit: 100,
    });
  });

  it('bounds unsettled messages by the prefetch on both the session window and the link credit', () => {
    const amqp = loadConfig({ ...local, AMQP_PREFETCH: '7' }).amqp;
    expect(amqp && amqpClientOptions(amqp).amqp).toEqual({
      incomingSessionWindow: 7,
      maxReceiverLinkCredit: 7,
      minReceiverLinkCredit: 3,
    });
  });

  it('writes mail to a directory when MAIL_DIR is set, with the Message-ID domain of the sender', () => {
    const { SMTP_URL: _, ...rest } = local;
    const config = loadConfig({ ...rest, MAIL_DIR: '/tmp/mail', MAIL_FROM: 'notifier@fleet.example' });
    expect(config.mail.transport).toEqual({ kind: 'directory', dir: '/tmp/mail' });
    expect(config.mail.messageIdDomain).toBe('fleet.example');
  });

  it('writes mail in English without a link unless MAIL_LOCALE and PORTAL_ORDER_URL say otherwise', () => {
    expect(loadConfig(local).mail).toMatchObject({ locale: 'en' });
    expect(loadConfig(local).salesOrder).toEqual({ portalOrderUrl: undefined });
    const url = 'https://fleet-portal.example.com/orders/{salesOrder}?tab=status';
    const config = loadConfig({ ...local, MAIL_LOCALE: 'de-AT', PORTAL_ORDER_URL: url });
    expect(config.mail).toMatchObject({ locale: 'de-AT' });
    expect(config.salesOrder).toEqual({ portalOrderUrl: url });
  });

  it('refuses an SMTP_URL with a parameter the transport does not take, at start', () => {
    expect(problemsOf({ ...local, SMTP_URL: 'smtp://relay.example?maxConnections=two' })).toEqual([
      'SMTP_URL\'s maxConnections must be a number of at least 1, got "two"',
    ]);
  });

  it('refuses a MAIL_LOCALE without a catalog and a PORTAL_ORDER_URL without {salesOrder} or http(s)', () => {
    expect(problemsOf({ ...local, MAIL_LOCALE: 'fr' })).toEqual([
      'MAIL_LOCALE must be a language tag of en, de (e.g. de or de-AT), got "fr"',
    ]);
    expect(problemsOf({ ...local, MAIL_LOCALE: 'not a tag' })).toHaveLength(1);
    for (const template of [
      'https://portal.example/orders/',
      'javascript:alert({salesOrder})',
      'orders/{salesOrder}',
    ]) {
      expect(problemsOf({ ...local, PORTAL_ORDER_URL: template })).toEqual([
        `PORTAL_ORDER_URL must be an http(s) URL with {salesOrder} in it, e.g. https://portal.example.com/orders/{salesOrder}, got "${template}"`,
      ]);
    }
  });

  it('reports every problem at once', () => {
    const problems = problemsOf({
      AMQP_PREFETCH: 'many',
      INGEST: 'amqp,carrier-pigeon',
      LOG_LEVEL: 'loud',
      AUTH: 'maybe',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'AMQP_PREFETCH must be an integer from 1 to 5000, got "many"',
        'INGEST takes "amqp", "webhook" and "event-hub", comma-separated, got "carrier-pigeon"',
        'AMQP_QUEUE is required when INGEST includes amqp',
        'AMQP_URL is not set and no AMQP broker is bound (a user-provided service with tag "amqp", or enterprise-messaging or event-mesh-message-client)',
        'DATABASE_URL is not set and no postgresql-db service is bound',
        'set exactly one of SMTP_URL (send by SMTP) and MAIL_DIR (write .eml files)',
        'MAIL_TO needs at least one recipient',
        'AUTH takes "xsuaa" or "none", got "maybe"',
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      ]),
    );
    expect(problems).toHaveLength(9);
  });

  it('needs no broker settings when events come only by webhook', () => {
    const { AMQP_URL: _, AMQP_QUEUE: __, ...rest } = local;
    expect(loadConfig({ ...rest, INGEST: 'webhook' }).amqp).toBeUndefined();
  });

  it('does not check broker settings when events come only by webhook', () => {
    const { AMQP_URL: _, AMQP_QUEUE: __, ...rest } = local;
    const config = loadConfig({ ...rest, INGEST: 'webhook', AMQP_PREFETCH: 'many', AMQP_URL: 'nonsense' });
    expect(config.ingest).toEqual(['webhook']);
    expect(config.amqp).toBeUndefined();
  });

  it('reads bound services only from the environment it is given', () => {
    const vcap = JSON.stringify({ xsuaa: [{ name: 'uaa', label: 'xsuaa', credentials: xsuaaCredentials }] });
    const { AUTH: _, ...rest } = local;
    const previous = process.env.VCAP_SERVICES;
    process.env.VCAP_SERVICES = vcap;
    try {
      expect(problemsOf(rest)).toEqual(['AUTH=xsuaa needs a bound xsuaa service (AUTH=none for local runs)']);
    } finally {
      if (previous === undefined) delete process.env.VCAP_SERVICES;
      else process.env.VCAP_SERVICES = previous;
    }
    expect(loadConfig({ ...rest, VCAP_SERVICES: vcap }).auth).toMatchObject({ kind: 'xsuaa' });
  });

  it('reports bound services that are not JSON', () => {
    expect(problemsOf({ ...local, VCAP_SERVICES: '{not json' })).toEqual(['VCAP_SERVICES is not valid JSON']);
  });

  it('uses the bound services on Cloud Foundry', () => {
    const VCAP_SERVICES = JSON.stringify({
      'postgresql-db': [
        {
          name: 'fon-db',
          label: 'postgresql-db',
          credentials: {
            hostname: 'db.example',
            port: '6543',
            dbname: 'notifier',
            username: 'u',
            password: 'p',
            sslrootcert: '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----',
          },
        },
      ],
      'enterprise-messaging': [
        {
          name: 'fon-event-mesh',
          label: 'enterprise-messaging',
          credentials: {
            namespace: 'fleet/fon/orders',
            messaging: [
              { protocol: ['httprest'], uri: 'https://rest.example' },
              {
                protocol: ['amqp10ws'],
                uri: 'wss://mesh.example/protocols/amqp10ws',
                oa2: {
                  clientid: 'cid',
                  clientsecret: 'cs',
                  tokenendpoint: 'https://uaa.example/oauth/token',
                },
              },
            ],
            management: [
              {
                uri: 'https://mgmt.example',
                oa2: { clientid: 'm', clientsecret: 'ms', tokenendpoint: 'https://t' },
              },
            ],
          },
        },
      ],
      xsuaa: [
        {
          name: 'fon-uaa',
          label: 'xsuaa',
          credentials: xsuaaCredentials,
        },
      ],
    });
    const config = loadConfig({
      VCAP_SERVICES,
      AMQP_QUEUE: 'queue:fleet/fon/orders/salesorder',
      SMTP_URL: 'smtp://mail.example',
      MAIL_TO: 'fleet@example.com',
      EVENT_MESH_SETUP: 'true',
      EVENT_MESH_TOPICS: 'a/b, c/d',
    });
    expect(config.database).toMatchObject({
      host: 'db.example',
      port: 6543,
      database: 'notifier',
      ssl: { rejectUnauthorized: true, ca: expect.stringContaining('BEGIN CERTIFICATE') },
    });
    expect(config.amqp && amqpClientOptions(config.amqp)).toMatchObject({
      uri: 'wss://mesh.example/protocols/amqp10ws',
      oa2: { endpoint: 'https://uaa.example/oauth/token', client: 'cid', secret: 'cs' },
    });
    expect(config.auth).toMatchObject({ kind: 'xsuaa', credentials: { clientid: 'sb-x' } });
    expect(config.eventMesh).toMatchObject({
      topics: ['a/b', 'c/d'],
      maxRedeliveryCount: 10,
      management: { uri: 'https://mgmt.example' },
    });
  });

  it('asks for the xsuaa binding unless authentication is explicitly off', () => {
    const { AUTH: _, ...rest } = local;
    expect(problemsOf(rest)).toEqual(['AUTH=xsuaa needs a bound xsuaa service (AUTH=none for local runs)']);
  });

  describe('with event-hub in INGEST', () => {
    // The binding shapes of SAP Cloud Identity Services (X509_GENERATED) and of the event-broker service.
    const identity = {
      clientid: 'fon-ias-client',
      url: 'https://fleet.accounts.ondemand.com',
      domains: ['accounts.ondemand.com'],
      certificate: '-----BEGIN CERTIFICATE-----',
      key: '-----BEGIN PRIVATE KEY-----',
    };
    const eventBroker = { ias: { clientId: 'event-hub-client' }, 'authentication-type': 'X509_IAS' };
    const vcap = (services: Record<string, unknown>) =>
      JSON.stringify(
        Object.fromEntries(
          Object.entries(services).map(([label, credentials]) => [label, [{ label, credentials }]]),
        ),
      );

    it('takes IAS tokens of the bound Event Hub, whatever AUTH says', () => {
      const config = loadConfig({
        ...local,
        INGEST: 'amqp,event-hub',
        VCAP_SERVICES: vcap({ identity, 'event-broker': eventBroker }),
      });
      expect(config.ingest).toEqual(['amqp', 'event-hub']);
      expect(config.auth).toEqual({ kind: 'none' });
      expect(config.eventHub).toEqual({
        identity: { clientid: 'fon-ias-client', url: identity.url, domains: ['accounts.ondemand.com'] },
        eventHubClientId: 'event-hub-client',
      });
    });

    it('refuses to start without the identity or the event-broker binding, naming each', () => {
      expect(problemsOf({ ...local, INGEST: 'event-hub' })).toEqual([
        'INGEST includes event-hub, which needs a bound identity (IAS) service to check tokens',
        'INGEST includes event-hub, which needs a bound event-broker service (its ias.clientId)',
      ]);
      expect(problemsOf({ ...local, INGEST: 'event-hub', VCAP_SERVICES: vcap({ identity }) })).toEqual([
        'INGEST includes event-hub, which needs a bound event-broker service (its ias.clientId)',
      ]);
      expect(
        problemsOf({ ...local, INGEST: 'event-hub', VCAP_SERVICES: vcap({ 'event-broker': eventBroker }) }),
      ).toEqual(['INGEST includes event-hub, which needs a bound identity (IAS) service to check tokens']);
    });

    it('names what a binding lacks', () => {
      const services = vcap({ identity: { url: identity.url }, 'event-broker': { ias: {} } });
      expect(problemsOf({ ...local, INGEST: 'event-hub', VCAP_SERVICES: services })).toEqual([
        'the bound identity service lacks clientid',
        'the bound event-broker service lacks ias.clientId (bind it with authentication-type X509_IAS)',
      ]);
    });

    it("trusts the tenant's own host when the binding lists no domains", () => {
      const { domains: _, ...withoutDomains } = identity;
      const services = vcap({ identity: withoutDomains, 'event-broker': eventBroker });
      const config = loadConfig({ ...local, INGEST: 'event-hub', VCAP_SERVICES: services });
      expect(config.eventHub?.identity.domains).toEqual(['fleet.accounts.ondemand.com']);
    });
  });

  it('is read in one place: only loadConfig.ts takes the environment, and hands it on only as an EnvReader', () => {
    expect(sourcesMatching(/process\.env/)).toEqual(['config/loadConfig.ts']);
    expect(sourcesMatching(/\bEnv\b/)).toEqual(['config/envReader.ts', 'config/loadConfig.ts']);
  });

  it('documents every key in .env.example', async () => {
    const example = await readFile(new URL('../../.env.example', import.meta.url), 'utf8');
    const documented = [...example.matchAll(/^([A-Z0-9_]+)=/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual([...CONFIG_KEYS].sort());
  });
});

describe('tracing (the OpenTelemetry exporter variables)', () => {
  it('is off without an OTLP endpoint, and with OTEL_SDK_DISABLED=true', () => {
    expect(loadConfig(local).tracing).toBeUndefined();
    expect(
      loadConfig({ ...local, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318', OTEL_SDK_DISABLED: 'true' })
        .tracing,
    ).toBeUndefined();
  });

  it('appends /v1/traces to the base endpoint, takes the traces endpoint as given, and decodes the headers', () => {
    expect(
      loadConfig({ ...local, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318/' }).tracing,
    ).toEqual({
      tracesUrl: 'https://otel.example:4318/v1/traces',
      headers: {},
      serviceName: 'fleet-order-notifier',
      sampler: { name: 'parentbased_traceidratio', ratio: 0.1 },
    });
    expect(
      loadConfig({
        ...local,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://ignored.example',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/otlp/traces',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant=fleet',
        OTEL_SERVICE_NAME: 'fon-eu10',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      }).tracing,
    ).toEqual({
      tracesUrl: 'https://collector.example/otlp/traces',
      headers: { authorization: 'Bearer abc', 'x-tenant': 'fleet' },
      serviceName: 'fon-eu10',
      sampler: { name: 'parentbased_traceidratio', ratio: 0.1 },
    });
  });

  it('reports a sampler the service does not build and a ratio outside 0 to 1', () => {
    const traced = { ...local, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' };
    expect(problemsOf({ ...traced, OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toEqual([
      'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, ' +
        'parentbased_always_off, parentbased_traceidratio, got "jaeger_remote"',
    ]);
    for (const arg of ['1.5', '-0.1', 'ten percent']) {
      expect(
        problemsOf({ ...traced, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: arg }),
      ).toEqual([`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${arg}"`]);
    }
  });

  it('reads its keys as every other key is read: trimmed, and an empty one taken as unset', () => {
    expect(
      loadConfig({
        ...local,
        OTEL_SDK_DISABLED: ' ',
        OTEL_EXPORTER_OTLP_ENDPOINT: ' https://otel.example:4318 ',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '  ',
        OTEL_EXPORTER_OTLP_HEADERS: ' , x-tenant = fleet ',
        OTEL_SERVICE_NAME: '',
        OTEL_TRACES_SAMPLER: ' traceidratio ',
        OTEL_TRACES_SAMPLER_ARG: ' ',
      }).tracing,
    ).toEqual({
      tracesUrl: 'https://otel.example:4318/v1/traces',
      headers: { 'x-tenant': 'fleet' },
      serviceName: 'fleet-order-notifier',
      sampler: { name: 'traceidratio', ratio: 0.1 },
    });
    expect(
      loadConfig({ ...local, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318', OTEL_SDK_DISABLED: ' TRUE ' })
        .tracing,
    ).toBeUndefined();
  });

  it('reports an endpoint that is not an http(s) URL and headers that are not key=value pairs', () => {
    expect(problemsOf({ ...local, OTEL_EXPORTER_OTLP_ENDPOINT: 'otel:4317' })).toEqual([
      'the OTLP endpoint must be an http(s) URL, got "otel:4317/v1/traces"',
    ]);
    expect(
      problemsOf({
        ...local,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel',
        OTEL_EXPORTER_OTLP_HEADERS: 'novalue,a=%zz',
      }),
    ).toEqual([
      'OTEL_EXPORTER_OTLP_HEADERS takes key=value pairs, comma-separated',
      'OTEL_EXPORTER_OTLP_HEADERS has a malformed %-escape',
    ]);
  });
});
