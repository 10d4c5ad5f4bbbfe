// Event Mesh's webhook push, end to end through the same handler as AMQP: real PostgreSQL, the S/4HANA
// stand-in read through the SAP Cloud SDK, a real SMTP receiver, and XSUAA tokens with real signatures.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { binaryEvent, S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { ServiceParts } from '../../src/service/buildService.js';
import { buildTestService, type TestServiceOptions } from '../support/harness.js';
import { observe } from '../support/observe.js';
import { orderMaker } from '../support/orders.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';
import {
  type ServiceKey,
  type StubClient,
  startXsuaaStub,
  type XsuaaStub,
  xsuaaEnv,
} from '../support/xsuaa.js';

const TOPIC = 'topic:sap/S4HANAOD/fleet/ce/sap/s4/beh/salesorder/v1/SalesOrder/Changed/v1';
// Another app's client in the subaccount, granted only the admin API's Viewer scope: its tokens are for this app
// (their audience names it), but do not let it push.
const REPORTING: StubClient = {
  clientid: 'sb-fleet-report!t1',
  clientsecret: 'report-secret',
  authorities: ['fon!t1.Viewer'],
};

const world = useWorld();
const view = observe(world);
let xsuaa: XsuaaStub;
let service: ServiceParts;
let app: FastifyInstance;

/** The service with events by webhook only, built as in production but not started. */
function webhookService(options: Partial<TestServiceOptions> = {}): Promise<ServiceParts> {
  return buildTestService({ ...world.endpoints(), ...options });
}

/** The same, with real XSUAA token validation: the bound xsuaa service is the local key endpoint. */
function securedService(): Promise<ServiceParts> {
  return webhookService({ env: xsuaaEnv(xsuaa) });
}

beforeAll(async () => {
  xsuaa = await startXsuaaStub([REPORTING]);
  service = await webhookService({ mailPollMs: 100 });
  service.mailSender.start();
  app = service.app;
});
afterAll(async () => {
  await service.stop();
  await xsuaa.close();
});
afterEach(() => {
  world.s4.setFault(undefined);
});

const { newOrder } = orderMaker(() => world.s4, 5_000_000);

function post(body: string, headers: Record<string, string> = {}, target: FastifyInstance = app) {
  return target.inject({
    method: 'POST',
    url: '/events',
    headers: { 'content-type': 'application/cloudevents+json', 'x-address': TOPIC, ...headers },
    payload: body,
  });
}

async function portalStatus(salesOrder: string): Promise<string | undefined> {
  return (await view.portalRow(salesOrder))?.portalStatus;
}

/** A delivery answered as processed: 200 after commit, the portal at `status`, and the one mail announcing it. */
async function expectApplied(res: Awaited<ReturnType<typeof post>>, salesOrder: string, status: string) {
  expect(res.statusCode).toBe(200);
  expect(res.json()).toEqual({ status: 'processed', result: 'applied' });
  // Answered after commit: the state is there the moment the answer is.
  expect(await portalStatus(salesOrder)).toBe(status);
  const [mail] = await eventually(
    'the mail',
    async () => view.mails(salesOrder).length === 1 && view.mails(salesOrder),
  );
  expect(mail?.headers['x-portal-status']).toBe(status);
  return mail;
}

/** A binary-mode event's headers: the required attributes, with `headers` added or replacing them. */
function binaryHeaders(headers: Record<string, string>): Record<string, string> {
  return { 'content-type': 'application/json', ...binaryEvent({}, 'ce-').attributes, ...headers };
}

/**
 * A token as a webhook subscription with OAuth2 client credentials fetches it (standalone Event Mesh and EMIS
 * alike): client id and secret against the token URL, the key's `url` + `/oauth/token`.
 */
async function clientCredentialsToken({ clientid, clientsecret, url }: ServiceKey): Promise<string> {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientid}:${clientsecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  if (!res.ok) throw new Error(`the token endpoint answered ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await world.db.pool.query<{ n: number }>(
    `select count(*)::int as "n" from ${sql}`,
    params,
  );
  return rows[0]?.n ?? 0;
}

describe('webhook handshake', () => {
  it('grants the requesting origin at any rate and allows POST, without asking for a token', async () => {
    const secured = await securedService();
    const res = await secured.app.inject({
      method: 'OPTIONS',
      url: '/events',
      headers: { 'webhook-request-origin': 'eventmesh.example.com', 'webhook-request-rate': '120' },
    });
    await secured.stop();
    expect(res.statusCode).toBe(200);
    expect(res.headers['webhook-allowed-origin']).toBe('eventmesh.example.com');
    expect(res.headers['webhook-allowed-rate']).toBe('*');
    expect(res.headers.allow).toContain('POST');
  });
});

describe('webhook deliveries', () => {
  it('applies a structured-mode event, answers 200 after commit and emails once', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'B' });
    const res = await post(salesOrderEvent({ salesOrder }));

    const mail = await expectApplied(res, salesOrder, 'PartiallyDelivered');
    expect(mail?.to).toEqual(['fleet-manager@fleet.example']);
  });

  it('takes a structured event sent as application/json, as Event Mesh forwards what S/4HANA published', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'C' });
    const res = await post(salesOrderEvent({ salesOrder }), { 'content-type': 'application/json' });

    expect(res.statusCode).toBe(200);
    expect(await portalStatus(salesOrder)).toBe('Delivered');
  });

  it('reads binary-mode attributes from percent-encoded ce-* headers and the data from the body', async () => {
    const salesOrder = newOrder({ overallSDProcessStatus: 'B' });
    const res = await post(JSON.stringify({ SalesOrder: salesOrder }), {
      'content-type': 'application/json; charset=utf-8',
      'ce-specversion': '1.0',
      'ce-id': 'binary%20%E2%82%AC-1',
      'ce-source': S4_SOURCE,
      'ce-type': 'sap.s4.beh.salesorder.v1.SalesOrder.Created.v1',
      'ce-time': '2026-03-03T13:19:54Z',
    });

    expect(res.statusCode).toBe(200);
    expect(await portalStatus(salesOrder)).toBe('InProcess');
    const { rows } = await world.db.pool.query(
      `select id, type from processed_event where family = 'salesOrder' and key = $1::text`,
      [salesOrder],
    );
    expect(rows).toEqual([{ id: 'binary €-1', type: 'sap.s4.beh.salesorder.v1.SalesOrder.Created.v1' }]);
  });

  it('answers a duplicate with 2xx without asking S/4HANA again or sending a second email', async () => {
    const salesOrder = newOrder();
    const event = salesOrderEvent({ salesOrder });
    const first = await post(event);
    await eventually('the first mail', async () => view.mails(salesOrder).length === 1);

    const again = await post(event);
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ status: 'duplicate' });
    expect(world.s4.calls(salesOrder)).toBe(1);
    expect(await count(`mail_outbox where family = 'salesOrder' and key = $1`, [salesOrder])).toBe(1);
    expect(view.mails(salesOrder)).toHaveLength(1);
  });

  it('answers 503 with Retry-After and records nothing while S/4HANA fails beyond the retry budget, then applies the redelivery', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'C' });
    world.s4.setFault((order) => (order === salesOrder ? 'unavailable' : 'ok'));
    const event = salesOrderEvent({ salesOrder });

    const failed = await post(event);
    expect(failed.statusCode).toBe(503);
    expect(Number(failed.headers['retry-after'])).toBeGreaterThan(0);
    expect(world.s4.calls(salesOrder)).toBe(3); // the whole retry budget was spent inside the request
    expect(await count(`processed_event where family = 'salesOrder' and key = $1`, [salesOrder])).toBe(0);
    expect(await portalStatus(salesOrder)).toBeUndefined();
    expect(await count(`mail_outbox where family = 'salesOrder' and key = $1`, [salesOrder])).toBe(0);
    expect(
      await count(`dead_letter where channel = 'webhook' and body = $1::bytea`, [Buffer.from(event)]),
    ).toBe(0);

    world.s4.setFault(undefined);
    const redelivered = await post(event);
    expect(redelivered.statusCode).toBe(200);
    expect(await portalStatus(salesOrder)).toBe('Delivered');
    await eventually('one mail', async () => view.mails(salesOrder).length === 1);
  });

  it('keeps a malformed event in dead_letter with its reason, without the token, and answers 202', async () => {
    const body =
      '{"specversion":"1.0","id":"bad-1","source":"/s","type":"sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1"';
    const res = await post(body, { authorization: 'Bearer secret-token-value' });

    expect(res.statusCode).toBe(202);
    const answer = res.json();
    expect(answer).toMatchObject({
      status: 'dead-lettered',
      reason: expect.stringMatching(/^body is not valid JSON/),
    });
    const { rows } = await world.db.pool.query(
      `select channel, reason, content_type as "contentType", headers, body
       from dead_letter where id = $1::bigint`,
      [answer.deadLetterId],
    );
    expect(rows[0]).toMatchObject({
      channel: 'webhook',
      reason: answer.reason,
      contentType: 'application/cloudevents+json',
      body: Buffer.from(body),
    });
    expect(rows[0].headers).toMatchObject({ 'x-address': TOPIC, caller: 'local/no-auth' });
    expect(JSON.stringify(rows[0].headers)).not.toContain('secret-token-value');
  });

  it('dead-letters an event whose sales order key is unsafe without calling S/4HANA', async () => {
    const calls = world.s4.calls();
    const res = await post(salesOrderEvent({ salesOrder: "1') or ('1" }));

    expect(res.statusCode).toBe(202);
    expect(res.json().reason).toBe('data.SalesOrder must be 1 to 10 letters or digits, got "1\') or (\'1"');
    expect(world.s4.calls()).toBe(calls);
  });

  it('dead-letters a binary-mode event whose header is not valid percent-encoded UTF-8, keeping its attributes', async () => {
    const rejected = async () => {
      const { body } = await app.inject({ method: 'GET', url: '/metrics' });
      const counted =
        /^fon_events_total\{channel="webhook",outcome="rejected",reason="invalid_event",family="none"\} (\d+)$/m;
      return Number(counted.exec(body)?.[1] ?? 0);
    };
    const before = await rejected();
    const res = await post(
      JSON.stringify({ SalesOrder: '1' }),
      binaryHeaders({ 'ce-id': 'overlong-%C0%A0' }),
    );

    expect(res.statusCode).toBe(202);
    expect(res.json().reason).toBe('header ce-id is not valid percent-encoded UTF-8');
    const { rows } = await world.db.pool.query(`select headers from dead_letter where id = $1::bigint`, [
      res.json().deadLetterId,
    ]);
    expect(rows[0].headers['ce-id']).toBe('overlong-%C0%A0');
    // Counted as every other refusal: it went through the handler.
    expect(await rejected()).toBe(before + 1);
  });

  it('dead-letters a ce-__proto__ header with its reason, as AMQP refuses the same attribute', async () => {
    const res = await post(
      JSON.stringify({ SalesOrder: '1' }),
      binaryHeaders({ 'ce-id': 'proto-1', 'ce-__proto__': 'x' }),
    );

    expect(res.statusCode).toBe(202);
    expect(res.json().reason).toBe('binary attribute "__proto__" is not a CloudEvents attribute name');
  });

  it('answers 503 when the dead letter cannot be stored, so the sender keeps the message', async () => {
    const unstorable = await webhookService();
    await unstorable.pool.end();
    const res = await post('not json', { 'content-type': 'application/json' }, unstorable.app);
    await unstorable.stop();

    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('answers 413 to a body over twice MAX_MESSAGE_BYTES and keeps nothing, and dead-letters one just under it', async () => {
    const small = await webhookService({ env: { MAX_MESSAGE_BYTES: '1024' } });
    try {
      const letters = async () =>
        (await world.db.pool.query(`select 1 from dead_letter where reason like '%1024%'`)).rowCount;
      const before = await letters();
      const over = await post(salesOrderEvent({ data: { padding: 'x'.repeat(2100) } }), {}, small.app);
      expect(over.statusCode).toBe(413);
      expect(await letters()).toBe(before);
      // Between the two limits the body reaches the parser, which refuses it with its reason.
      const under = await post(salesOrderEvent({ data: { padding: 'x'.repeat(1500) } }), {}, small.app);
      expect(under.statusCode).toBe(202);
      expect(under.json()).toMatchObject({
        status: 'dead-lettered',
        reason: expect.stringContaining('1024'),
      });
    } finally {
      await small.stop();
    }
  });
});

describe('webhook shutdown', () => {
  it('answers a delivery still waiting to retry S/4HANA with 503 once the app closes', async () => {
    const salesOrder = newOrder();
    world.s4.setFault((order) => (order === salesOrder ? 'unavailable' : 'ok'));
    // Retry waits of up to a minute: only the abort on close lets this delivery answer.
    const patient = await webhookService({
      retryPolicy: { attempts: 5, baseDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    const closing = patient.app;
    const answer = post(salesOrderEvent({ salesOrder }), {}, closing);
    await eventually('the first S/4HANA read', async () => world.s4.calls(salesOrder) >= 1);
    await closing.close();

    const res = await answer;
    await patient.stop();
    expect(res.statusCode).toBe(503);
    expect(await count(`processed_event where family = 'salesOrder' and key = $1`, [salesOrder])).toBe(0);
  });
});

describe('webhook authorization with XSUAA', () => {
  let securedParts: ServiceParts;
  let secured: FastifyInstance;
  beforeAll(async () => {
    securedParts = await securedService();
    secured = securedParts.app;
  });
  afterAll(async () => {
    await securedParts.stop();
  });

  it('answers 401 to a delivery without a token and processes nothing', async () => {
    const salesOrder = newOrder();
    const res = await post(salesOrderEvent({ salesOrder }), {}, secured);
    expect(res.statusCode).toBe(401);
    expect(world.s4.calls(salesOrder)).toBe(0);
  });

  it('answers 401 to an unauthenticated 2 MiB delivery before its body is read', async () => {
    const url = new URL(await secured.listen({ host: '127.0.0.1', port: 0 }));
    const salesOrder = newOrder();
    const event = Buffer.from(salesOrderEvent({ salesOrder }));
    const announced = 2 * 1024 * 1024;
    const delivery = httpRequest({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: '/events',
      headers: { 'content-type': 'application/cloudevents+json', 'content-length': String(announced) },
    });
    const answer = new Promise<IncomingMessage>((resolve, reject) => {
      delivery.once('response', resolve).once('error', reject);
    });
    const patience = new AbortController();
    try {
      // Only the first 64 KiB of the announced 2 MiB are ever sent: a server that read the body before checking
      // the token would still be waiting for the rest.
      delivery.write(Buffer.concat([event, Buffer.alloc(64 * 1024 - event.length, ' ')]));
      const res = await Promise.race([
        answer,
        sleep(10_000, undefined, { signal: patience.signal }).then(() => {
          throw new Error('no answer while the body was still being sent');
        }),
      ]);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(delivery.writableFinished).toBe(false);
      expect(world.s4.calls(salesOrder)).toBe(0);
    } finally {
      patience.abort();
      delivery.destroy();
    }
  });

  it('answers 403 to the client-credentials token of a client without the EventSubmit authority', async () => {
    const salesOrder = newOrder();
    const token = await clientCredentialsToken({ ...REPORTING, url: xsuaa.serviceKey.url });
    const res = await post(salesOrderEvent({ salesOrder }), { authorization: `Bearer ${token}` }, secured);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'forbidden', message: 'missing scope EventSubmit' });
    expect(world.s4.calls(salesOrder)).toBe(0);
  });

  it("processes a delivery end to end whose token a service key of the app's instance fetched", async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'C' });
    const token = await clientCredentialsToken(xsuaa.serviceKey);
    // The app's own client, holding EventSubmit only because xs-security.json lists it in "authorities".
    expect(claimsOf(token)).toMatchObject({
      grant_type: 'client_credentials',
      client_id: xsuaa.credentials.clientid,
      authorities: expect.arrayContaining([`${xsuaa.credentials.xsappname}.EventSubmit`]),
    });

    const res = await post(salesOrderEvent({ salesOrder }), { authorization: `Bearer ${token}` }, secured);
    await expectApplied(res, salesOrder, 'Delivered');
  });
});
