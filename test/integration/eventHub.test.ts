// SAP Cloud Application Event Hub's push, end to end through the real service (configured from VCAP_SERVICES as on
// Cloud Foundry): IAS tokens with real RS256 signatures, validated by @sap/xssec against a local IAS tenant over
// real TLS; real PostgreSQL, the S/4HANA stand-in and a real SMTP receiver. AUTH=none, as in every test service:
// the Event Hub check does not depend on it.
import { CloudEvent, HTTP } from 'cloudevents';
import fastify from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { binaryEvent, s4Event } from '../../sandbox/s4Events.js';
import { createNoAuth } from '../../src/http/auth.js';
import { requireEventHubToken } from '../../src/http/eventHubAuth.js';
import type { Service } from '../../src/service/buildService.js';
import { startTestService } from '../support/harness.js';
import { eventHubBindings, type IasStub, startIasStub } from '../support/ias.js';
import { orderMaker } from '../support/orders.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const PATH = '/event-hub/events';
const CHANGED = 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1';
// What Event Hub adds to every event it pushes.
const EXTENSIONS = {
  'ce-sapconsumertenant': 'c0ffee00-tenant',
  'ce-kafkapartition': '2',
  'ce-kafkaoffset': '40713',
};

const world = useWorld();
let ias: IasStub;
let otherTenant: IasStub;
let service: Service;

beforeAll(async () => {
  [ias, otherTenant] = await Promise.all([startIasStub(), startIasStub()]);
  service = await startTestService({
    ...world.endpoints(),
    env: { INGEST: 'event-hub', VCAP_SERVICES: eventHubBindings(ias) },
  });
});
afterAll(async () => {
  await service?.stop();
  await Promise.all([ias?.close(), otherTenant?.close()]);
});
afterEach(() => world.s4.setFault(undefined));

const { newOrder } = orderMaker(() => world.s4, 6_100_000);

/** A binary-mode delivery as Event Hub makes it: ce-* headers with its extensions, the data as JSON body. */
function eventHubDelivery(
  salesOrder: string,
  id = crypto.randomUUID(),
): { headers: Record<string, string>; body: string } {
  const { attributes, body } = binaryEvent({ salesOrder, id, type: CHANGED }, 'ce-');
  return { headers: { 'content-type': 'application/json', ...attributes, ...EXTENSIONS }, body };
}

function post(delivery: { headers: Record<string, string>; body: string }, token: string | undefined) {
  return service.app.inject({
    method: 'POST',
    url: PATH,
    headers: { ...delivery.headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    payload: delivery.body,
  });
}

async function portalStatus(salesOrder: string): Promise<string | undefined> {
  const { rows } = await world.db.pool.query<{ status: string }>(
    `select portal_status as "status" from portal_order_status where sales_order = $1::text`,
    [salesOrder],
  );
  return rows[0]?.status;
}

async function processedCount(salesOrder: string): Promise<number> {
  const { rows } = await world.db.pool.query<{ n: number }>(
    `select count(*)::int as "n" from processed_event where family = 'salesOrder' and key = $1::text`,
    [salesOrder],
  );
  return rows[0]?.n ?? 0;
}

describe('Event Hub deliveries with its token', () => {
  it('applies a binary-mode event, answers 200 after commit and emails once', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'C' });
    const res = await post(eventHubDelivery(salesOrder), ias.token());

    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'processed', result: 'applied' });
    expect(await portalStatus(salesOrder)).toBe('Delivered');
    await eventually('the mail', async () =>
      world.smtp.messages.some((mail) => mail.headers['x-sales-order'] === salesOrder),
    );
    const metrics = await service.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(
      /fon_events_total\{channel="event-hub",outcome="applied",reason="",family="sales_order"\} [1-9]/,
    );
    // xssec fetched the tenant's keys for Event Hub's client, over TLS.
    expect(ias.keyRequests).toContain(ias.eventHubClientId);
  });

  it('answers a redelivery 200 as a duplicate without asking S/4HANA again', async () => {
    const salesOrder = newOrder();
    const delivery = eventHubDelivery(salesOrder);
    expect((await post(delivery, ias.token())).statusCode).toBe(200);
    // Another partition and offset: Event Hub's attributes are not what the event means.
    const again = await post(
      { ...delivery, headers: { ...delivery.headers, 'ce-kafkapartition': '5', 'ce-kafkaoffset': '9' } },
      ias.token(),
    );
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ status: 'duplicate' });
    expect(world.s4.calls(salesOrder)).toBe(1);
  });

  it('takes a copy re-serialized by the CloudEvents SDK with milliseconds in its time as a duplicate', async () => {
    const salesOrder = newOrder();
    const structured = s4Event({ salesOrder });
    expect(
      (
        await post(
          { headers: { 'content-type': 'application/json' }, body: JSON.stringify(structured) },
          ias.token(),
        )
      ).statusCode,
    ).toBe(200);
    const copy = HTTP.binary(
      new CloudEvent(structured).cloneWith({ sapconsumertenant: 'c0ffee00-tenant', kafkaoffset: 1 }),
    );
    expect(copy.headers['ce-time']).toMatch(/\.000Z$/);
    const res = await post(
      { headers: copy.headers as Record<string, string>, body: String(copy.body) },
      ias.token(),
    );
    expect(res.json()).toEqual({ status: 'duplicate' });
    const changed = HTTP.binary(
      new CloudEvent(structured).cloneWith({ type: 'sap.s4.beh.salesorder.v1.SalesOrder.Deleted.v1' }),
    );
    const conflict = await post(
      { headers: changed.headers as Record<string, string>, body: String(changed.body) },
      ias.token(),
    );
    expect(conflict.statusCode).toBe(202);
    expect(conflict.json().reason).toBe(
      'conflict: this source and id were processed with a different payload',
    );
  });

  it('answers 503 with Retry-After while S/4HANA fails, then applies the redelivery', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'B' });
    world.s4.setFault((order) => (order === salesOrder ? 'unavailable' : 'ok'));
    const delivery = eventHubDelivery(salesOrder);

    const failed = await post(delivery, ias.token());
    expect(failed.statusCode).toBe(503);
    expect(Number(failed.headers['retry-after'])).toBeGreaterThan(0);
    expect(await processedCount(salesOrder)).toBe(0);

    world.s4.setFault(undefined);
    const redelivered = await post(delivery, ias.token());
    expect(redelivered.statusCode).toBe(200);
    expect(await portalStatus(salesOrder)).toBe('PartiallyDelivered');
  });

  it('keeps a malformed event in dead_letter with its Event Hub extensions and answers 202', async () => {
    const delivery = eventHubDelivery("1') or ('1");
    const res = await post(delivery, ias.token());

    expect(res.statusCode).toBe(202);
    const answer = res.json();
    expect(answer).toMatchObject({
      status: 'dead-lettered',
      reason: 'data.SalesOrder must be 1 to 10 letters or digits, got "1\') or (\'1"',
    });
    const { rows } = await world.db.pool.query(
      `select channel, source, event_id as "eventId", content_type as "contentType", attributes, headers, body
       from dead_letter where id = $1::bigint`,
      [answer.deadLetterId],
    );
    expect(rows[0]).toMatchObject({
      channel: 'event-hub',
      source: null,
      contentType: 'application/json',
      body: Buffer.from(delivery.body),
    });
    expect(rows[0].attributes).toMatchObject({
      id: delivery.headers['ce-id'],
      sapconsumertenant: 'c0ffee00-tenant',
      kafkapartition: '2',
      kafkaoffset: '40713',
    });
    expect(rows[0].headers.caller).toBe(`client/${ias.eventHubClientId}`);
    expect(JSON.stringify(rows[0].headers)).not.toContain('Bearer');
  });
});

describe('Event Hub endpoint authentication (AUTH=none does not switch it off)', () => {
  it.each([
    ['no token', () => undefined],
    ['a token signed by a key the tenant does not publish', () => ias.token({ otherKey: true })],
    ['an expired token', () => ias.token({ expiresInSeconds: -3600 })],
    [
      'a token of another IAS tenant (another issuer)',
      () => otherTenant.token({ aud: [ias.credentials.clientid] }),
    ],
    ['a token for another application', () => ias.token({ aud: ['someone-else'] })],
    ['something that is not a JWT', () => 'not-a-jwt'],
  ])('answers 401 to %s and processes nothing', async (_what, token) => {
    const salesOrder = newOrder();
    const res = await post(eventHubDelivery(salesOrder), token());
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(world.s4.calls(salesOrder)).toBe(0);
    expect(await processedCount(salesOrder)).toBe(0);
  });

  it("answers 403 to a valid token of this app's tenant issued to another client", async () => {
    const salesOrder = newOrder();
    const res = await post(eventHubDelivery(salesOrder), ias.token({ azp: 'some-other-app' }));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      error: 'forbidden',
      message: 'only the bound Event Hub may deliver events here',
    });
    expect(world.s4.calls(salesOrder)).toBe(0);
    expect(await processedCount(salesOrder)).toBe(0);
  });

  it('offers no Event Mesh webhook when INGEST names only event-hub', async () => {
    const res = await service.app.inject({ method: 'POST', url: '/events', payload: '{}' });
    expect(res.statusCode).toBe(404);
  });
});

describe('Event Hub endpoint when the IAS tenant cannot serve its keys', () => {
  it('answers 503 with Retry-After, so Event Hub retries, not 401', async () => {
    // A tenant of its own: the keys of `ias` are cached by now.
    const troubled = await startIasStub();
    const app = fastify();
    createNoAuth().decorate(app);
    const hook = requireEventHubToken({
      identity: troubled.credentials,
      eventHubClientId: troubled.eventHubClientId,
    });
    app.post('/in', { onRequest: hook }, async () => ({ ok: true }));
    const push = () =>
      app.inject({ method: 'POST', url: '/in', headers: { authorization: `Bearer ${troubled.token()}` } });
    try {
      troubled.setKeysAvailable(false);
      const refused = await push();
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(troubled.keyRequests).toHaveLength(1);

      troubled.setKeysAvailable(true);
      const taken = await push();
      expect(taken.statusCode).toBe(200);
    } finally {
      await app.close();
      await troubled.close();
    }
  });
});
