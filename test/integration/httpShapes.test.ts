// The shapes an HTTP push comes in, on both push endpoints (Event Mesh's webhook and Event Hub's), end to end
// through the real service. Batch mode: every event of a batch on its own through the same path; 200 only when
// every event is settled, else 503 and the resent batch completes with one effect per event. Unreadable and
// malformed content types: one path, a dead letter with the reason, answered 202. Real PostgreSQL, the S/4HANA
// stand-in, a real SMTP receiver and, for Event Hub, IAS tokens with real signatures over real TLS.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import type { Service } from '../../src/service/buildService.js';
import { startTestService } from '../support/harness.js';
import { eventHubBindings, type IasStub, startIasStub } from '../support/ias.js';
import { orderMaker } from '../support/orders.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const BATCH = 'application/cloudevents-batch+json';
const MAX_MESSAGE_BYTES = 16 * 1024;

const world = useWorld();
let ias: IasStub;
let service: Service;

beforeAll(async () => {
  ias = await startIasStub();
  service = await startTestService({
    ...world.endpoints(),
    env: {
      INGEST: 'webhook,event-hub',
      VCAP_SERVICES: eventHubBindings(ias),
      MAX_MESSAGE_BYTES: String(MAX_MESSAGE_BYTES),
    },
  });
});
afterAll(async () => {
  await service?.stop();
  await ias?.close();
});
afterEach(() => world.s4.setFault(undefined));

const { newOrder } = orderMaker(() => world.s4, 6_200_000);
const ENDPOINTS = ['/events', '/event-hub/events'] as const;

function postAs(path: (typeof ENDPOINTS)[number], body: string, contentType = BATCH) {
  const authorization = path === '/events' ? {} : { authorization: `Bearer ${ias.token()}` };
  return service.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': contentType, ...authorization },
    payload: body,
  });
}

const batchOf = (events: string[]) => `[${events.join(',\n')}]`;

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await world.db.pool.query<{ n: number }>(
    `select count(*)::int as "n" from ${sql}`,
    params,
  );
  return rows[0]?.n ?? 0;
}

function mailsFor(salesOrder: string) {
  return world.smtp.messages.filter((mail) => mail.headers['x-sales-order'] === salesOrder);
}

describe.each(ENDPOINTS)('batch mode on %s', (path) => {
  it('settles a batch of 20 with duplicates and one malformed event: 200, one effect per event', async () => {
    const earlier = salesOrderEvent({ salesOrder: newOrder() });
    expect((await postAs(path, batchOf([earlier]))).statusCode).toBe(200);

    const orders = Array.from({ length: 15 }, () => newOrder({ overallDeliveryStatus: 'B' }));
    const fresh = orders.map((salesOrder) => salesOrderEvent({ salesOrder }));
    const malformed = salesOrderEvent({ salesOrder: 'no spaces allowed' });
    // 15 new events, 2 of them again in the same batch, 2 copies of an event processed before, 1 malformed.
    const events = [...fresh.slice(0, 8), fresh[0], earlier, malformed, ...fresh.slice(8), fresh[9], earlier];
    expect(events).toHaveLength(20);
    const res = await postAs(path, batchOf(events as string[]));

    expect(res.statusCode).toBe(200);
    const answer = res.json() as { status: string; events: Array<{ status: string; reason?: string }> };
    expect(answer.status).toBe('settled');
    // In-batch repeats of one identity run one after the other: the first is processed, the later ones not.
    expect(answer.events.map((event) => event.status)).toEqual(
      events.map((event, index) => {
        if (event === malformed) return 'dead-lettered';
        return event === earlier || events.indexOf(event) < index ? 'duplicate' : 'processed';
      }),
    );
    expect(answer.events[10]?.reason).toBe(
      'data.SalesOrder must be 1 to 10 letters or digits, got "no spaces allowed"',
    );
    for (const salesOrder of orders) {
      expect(world.s4.calls(salesOrder)).toBe(1);
      expect(
        await count(`processed_event where family = 'salesOrder' and key = $1::text`, [salesOrder]),
      ).toBe(1);
    }
    await eventually('one mail per order', async () => orders.every((order) => mailsFor(order).length === 1));
    const { rows } = await world.db.pool.query(
      `select channel, content_type as "contentType", body from dead_letter where reason like 'data.SalesOrder%' and body = $1::bytea`,
      [Buffer.from(malformed)],
    );
    // The refused event is kept alone, as it came, readable for a replay.
    expect(rows).toEqual([
      {
        channel: path === '/events' ? 'webhook' : 'event-hub',
        contentType: 'application/cloudevents+json',
        body: Buffer.from(malformed),
      },
    ]);
  });

  it('answers 503 when S/4HANA fails for one order; the resent batch completes with one effect per event', async () => {
    const orders = Array.from({ length: 5 }, () => newOrder({ overallDeliveryStatus: 'C' }));
    const failing = orders[2] as string;
    world.s4.setFault((order) => (order === failing ? 'unavailable' : 'ok'));
    const body = batchOf(orders.map((salesOrder) => salesOrderEvent({ salesOrder })));

    const first = await postAs(path, body);
    expect(first.statusCode).toBe(503);
    expect(Number(first.headers['retry-after'])).toBeGreaterThan(0);
    expect(first.json().events.map((event: { status: string }) => event.status)).toEqual([
      'processed',
      'processed',
      'retry-later',
      'processed',
      'processed',
    ]);
    expect(await count(`processed_event where family = 'salesOrder' and key = $1::text`, [failing])).toBe(0);

    world.s4.setFault(undefined);
    const resent = await postAs(path, body);
    expect(resent.statusCode).toBe(200);
    expect(resent.json().events.map((event: { status: string }) => event.status)).toEqual([
      'duplicate',
      'duplicate',
      'processed',
      'duplicate',
      'duplicate',
    ]);
    await eventually('one mail per order', async () => orders.every((order) => mailsFor(order).length === 1));
    for (const salesOrder of orders) {
      expect(
        await count(`processed_event where family = 'salesOrder' and key = $1::text`, [salesOrder]),
      ).toBe(1);
      expect(await count(`mail_outbox where family = 'salesOrder' and key = $1::text`, [salesOrder])).toBe(1);
    }
  });

  it('answers an empty batch 200', async () => {
    const res = await postAs(path, '[]');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'settled', events: [] });
  });

  it('refuses a batch over MAX_MESSAGE_BYTES as a whole with 413, processing none of it', async () => {
    const orders = Array.from({ length: 60 }, () => newOrder());
    const body = batchOf(orders.map((salesOrder) => salesOrderEvent({ salesOrder })));
    expect(body.length).toBeGreaterThan(MAX_MESSAGE_BYTES);
    const res = await postAs(path, body);
    expect(res.statusCode).toBe(413);
    expect(orders.map((salesOrder) => world.s4.calls(salesOrder))).toEqual(orders.map(() => 0));
    expect(
      await count(`processed_event where family = 'salesOrder' and key = any($1::text[])`, [orders]),
    ).toBe(0);
  });

  it('dead-letters only the element that repeats a key; the others are processed', async () => {
    const salesOrder = newOrder();
    const repeated = '{"specversion":"1.0","id":"x","id":"y","source":"/s","type":"t"}';
    const res = await postAs(path, batchOf([repeated, salesOrderEvent({ salesOrder })]));
    expect(res.statusCode).toBe(200);
    expect(res.json().events).toMatchObject([
      { status: 'dead-lettered', reason: 'duplicate key "id" at the top level' },
      { status: 'processed', result: 'applied' },
    ]);
  });

  it('keeps a batch that is no JSON array whole as one dead letter, counted as rejected, and answers 202', async () => {
    const channel = path === '/events' ? 'webhook' : 'event-hub';
    const rejected = async () => {
      const { body } = await service.app.inject({ method: 'GET', url: '/metrics' });
      const series = `fon_events_total{channel="${channel}",outcome="rejected",reason="invalid_event",family="none"} `;
      const line = body.split('\n').find((candidate) => candidate.startsWith(series));
      return line === undefined ? 0 : Number(line.slice(series.length));
    };
    const before = await rejected();
    const res = await postAs(path, '{"specversion":"1.0"}');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({
      status: 'dead-lettered',
      reason: 'a CloudEvents batch must be a JSON array, got a map',
    });
    const { rows } = await world.db.pool.query(
      `select content_type as "contentType", body from dead_letter where id = $1::bigint`,
      [res.json().deadLetterId],
    );
    expect(rows[0]).toEqual({ contentType: BATCH, body: Buffer.from('{"specversion":"1.0"}') });
    expect(await rejected()).toBe(before + 1);
  });
});

describe.each(ENDPOINTS)('content types on %s', (path) => {
  it.each([
    ['text/plain', 'content type "text/plain" is not JSON'],
    ['application/xml', 'content type "application/xml" is not JSON'],
    [';;', 'content type ";;" is not a valid media type'],
    ['a b', 'content type "a b" is not a valid media type'],
    ['application/', 'content type "application/" is not a valid media type'],
  ])(
    'keeps a delivery sent as %j in dead_letter with its reason and answers 202',
    async (contentType, reason) => {
      const salesOrder = newOrder();
      const event = salesOrderEvent({ salesOrder });
      const res = await postAs(path, event, contentType);

      expect(res.statusCode).toBe(202);
      expect(res.json()).toMatchObject({ status: 'dead-lettered', reason });
      const { rows } = await world.db.pool.query(
        `select content_type as "contentType", headers, body from dead_letter where id = $1::bigint`,
        [res.json().deadLetterId],
      );
      expect(rows[0]).toMatchObject({ contentType, body: Buffer.from(event) });
      expect(rows[0].headers['content-type']).toBe(contentType);
      expect(world.s4.calls(salesOrder)).toBe(0);
    },
  );
});
