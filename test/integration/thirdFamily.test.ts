// A third event family costs its folder: outbound deliveries (test/support/outboundDelivery/, its table created
// here) registered beside the service's own families run the whole shared path, with no line of shared code
// naming them: events over AMQP 1.0 from the real broker, parse and identity (a duplicate, a conflict), the read
// from an OData V2 stand-in, the effect on the real PostgreSQL, one email per real change through a real SMTP
// server, the portal push, the timeline, the admin lists and their retries, retention and a dead letter's replay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import { FAMILIES } from '../../src/families/index.js';
import type { Service } from '../../src/service/buildService.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { type DeliveryServer, startDeliveryServer } from '../support/deliveryServer.js';
import { registerDestination } from '../support/destination.js';
import { startTestService } from '../support/harness.js';
import { DELIVERY_TABLE } from '../support/outboundDelivery/effect.js';
import { DELIVERY_TYPE_PREFIX } from '../support/outboundDelivery/events.js';
import { outboundDelivery } from '../support/outboundDelivery/index.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
let deliveries: DeliveryServer;
let queue: TestQueue;
let service: Service;

beforeAll(async () => {
  deliveries = await startDeliveryServer();
  // The test's server is the family's S/4HANA and the portal alike.
  const destination = registerDestination(deliveries.url);
  await world.db.pool.query(DELIVERY_TABLE);
  queue = await createTestQueue('fon-third-family');
  service = await startTestService({
    ...world.endpoints(),
    queueAddress: queue.address,
    families: [...FAMILIES, outboundDelivery(destination)],
    env: { PORTAL_DESTINATION: destination, MAX_DELIVERIES: '2' },
    retryPolicy: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
});

afterAll(async () => {
  await service?.stop();
  await queue?.delete();
  await deliveries?.close();
});

let next = 80_000_001;
/** A delivery in the stand-in: goods movement A, B or C, changed at `changedAt`. */
function newDelivery(status: string, changedAt: string): string {
  const delivery = String(next++);
  deliveries.set({
    DeliveryDocument: delivery,
    OverallGoodsMovementStatus: status,
    SoldToParty: '17100001',
    changedAt: new Date(changedAt),
  });
  return delivery;
}

function deliveryEvent(delivery: string, id: string, time = '2026-03-03T13:19:54Z'): string {
  return salesOrderEvent({
    id,
    time,
    type: `${DELIVERY_TYPE_PREFIX}Changed.v1`,
    // As S/4HANA writes the key in events: with its leading zeros.
    data: { DeliveryDocument: delivery.padStart(10, '0') },
  });
}

const publish = (...bodies: string[]) =>
  world.publisher.send(
    queue.address,
    bodies.map((body) => ({ body })),
  );

async function processed(delivery: string) {
  const { rows } = await world.db.pool.query(
    `select id, outcome, notification from processed_event
     where family = 'outboundDelivery' and key = $1 order by processed_at`,
    [delivery],
  );
  return rows;
}

const mailsOf = (delivery: string) =>
  world.smtp.messages.filter((mail) => mail.headers['x-outbound-delivery'] === delivery);

const api = async (method: 'GET' | 'POST', url: string) => {
  const res = await service.app.inject({ method, url });
  return { status: res.statusCode, body: res.json() };
};

describe('a third family, registered beside the service own', () => {
  const first = '2026-03-01T08:00:00Z';
  const second = '2026-03-02T08:00:00Z';
  let delivery: string;

  it('reads, applies, emails once per real change and pushes its events; a duplicate is one, a conflict refused', async () => {
    delivery = newDelivery('A', first);
    const created = deliveryEvent(delivery, `evt-${delivery}-1`);
    await publish(created);
    await eventually('the first event applied', async () => (await processed(delivery)).length === 1);
    expect(await processed(delivery)).toEqual([
      { id: `evt-${delivery}-1`, outcome: 'applied', notification: 'new' },
    ]);

    // The same event again is a duplicate; the same identity with another meaning a conflict, refused.
    await publish(created, deliveryEvent(delivery, `evt-${delivery}-1`, '2026-03-04T00:00:00Z'));
    const letter = await eventually('the conflict refused', async () => {
      const { rows } = await world.db.pool.query(
        `select family, key, reason from dead_letter where event_id = $1`,
        [`evt-${delivery}-1`],
      );
      return rows[0];
    });
    expect(letter).toMatchObject({ family: 'outboundDelivery', key: delivery });
    expect(letter.reason).toMatch(/^conflict/);
    await eventually('the duplicate recorded', async () => {
      const { rows } = await world.db.pool.query('select 1 from duplicate_arrival where id = $1', [
        `evt-${delivery}-1`,
      ]);
      return rows.length === 1;
    });

    deliveries.set({
      DeliveryDocument: delivery,
      OverallGoodsMovementStatus: 'C',
      SoldToParty: '17100001',
      changedAt: new Date(second),
    });
    await publish(deliveryEvent(delivery, `evt-${delivery}-2`));
    await eventually('the change applied', async () => (await processed(delivery)).length === 2);
    // Nothing changed since: applied, but no change to tell.
    await publish(deliveryEvent(delivery, `evt-${delivery}-3`));
    await eventually('the repeat applied', async () => (await processed(delivery)).length === 3);
    expect((await processed(delivery)).slice(1)).toEqual([
      { id: `evt-${delivery}-2`, outcome: 'applied', notification: 'changed' },
      { id: `evt-${delivery}-3`, outcome: 'applied', notification: 'unchanged' },
    ]);

    const [news, shipped] = await eventually('both emails', async () =>
      mailsOf(delivery).length === 2 ? mailsOf(delivery) : undefined,
    );
    expect(news?.subject).toBe(`Outbound delivery ${delivery}: planned`);
    expect(shipped?.subject).toBe(`Outbound delivery ${delivery}: shipped`);
    expect(shipped?.text).toBe('Status: planned → shipped\n');
    expect(shipped?.headers['in-reply-to']).toBe(news?.messageId);
    const { rows: queued } = await world.db.pool.query(
      `select count(*)::int as n from mail_outbox where family = 'outboundDelivery' and key = $1`,
      [delivery],
    );
    expect(queued).toEqual([{ n: 2 }]);

    const puts = await eventually('both pushes', async () =>
      deliveries.puts(delivery).length === 2 ? deliveries.puts(delivery) : undefined,
    );
    expect(puts.map((put) => put.body)).toEqual([
      { deliveryDocument: delivery, status: 'Planned', s4ChangedAt: '2026-03-01T08:00:00.000Z' },
      { deliveryDocument: delivery, status: 'Shipped', s4ChangedAt: '2026-03-02T08:00:00.000Z' },
    ]);
    expect(new Set(puts.map((put) => put.idempotencyKey)).size).toBe(2);
  });

  it('tells its timeline by its key, as events write it or as tables hold it', async () => {
    await eventually('the push booked', async () => {
      const { body } = await api('GET', `/api/outbound-deliveries/${delivery}/timeline`);
      return body.portalPush?.step === 'pushed';
    });
    const { status, body } = await api('GET', `/api/outbound-deliveries/00${delivery}/timeline`);
    expect(status).toBe(200);
    expect(body.deliveryDocument).toBe(delivery);
    expect(body.arrivals.map((arrival: { outcome: string }) => arrival.outcome).sort()).toEqual(
      ['applied', 'applied', 'applied', 'dead_lettered', 'duplicate'].sort(),
    );
    const change = body.arrivals.find((arrival: { id: string }) => arrival.id === `evt-${delivery}-2`);
    expect(change).toMatchObject({
      read: { status: 'Shipped', lastChangeDateTime: '2026-03-02T08:00:00.000Z' },
      notification: { decision: 'changed', realChange: true },
    });
    expect(body.emails.filter((step: { step: string }) => step.step === 'sent')).toHaveLength(2);
    expect(body.portalPush).toMatchObject({ state: 'done', step: 'pushed', status: 'Shipped' });

    const metrics = await service.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(
      /fon_events_total\{[^}]*outcome="applied"[^}]*family="outbound_delivery"\} 3/,
    );
    const families = (await api('GET', '/api/families')).body;
    expect(JSON.stringify(families)).toContain('Outbound delivery');
    expect((await api('GET', '/api/outbound-deliveries/99999999')).status).toBe(404);
  });

  it('lists its parked email and push with its family and key, and a retry re-queues exactly its row', async () => {
    const parked = newDelivery('B', first);
    world.smtp.setRefuse(() => 'permanent');
    deliveries.refusePut(parked, true);
    // A sales order's push of the same key, parked too: the delivery's retry must leave it.
    await world.db.pool.query(
      `insert into portal_push (family, key, content, push_id, state, attempts, last_error)
       values ('salesOrder', $1, '{"salesOrder": "x", "portalStatus": "Open"}', gen_random_uuid(), 'parked', 1,
               'portal answered 400: bad field')`,
      [parked],
    );
    await publish(deliveryEvent(parked, `evt-${parked}-1`));
    const mail = await eventually('the email parked', async () => {
      const { items } = (await api('GET', '/api/mail')).body;
      return items.find(
        (item: { key: string; state: string }) => item.key === parked && item.state === 'parked',
      );
    });
    world.smtp.setRefuse(undefined);
    expect(mail).toMatchObject({
      family: 'outboundDelivery',
      key: parked,
      content: { status: 'Shipping', previousStatus: null },
      lookup: `outbound-deliveries/${parked}`,
      retry: `mail/${mail.id}/retry`,
    });
    const push = await eventually('the push parked', async () => {
      const { items } = (await api('GET', '/api/portal-pushes')).body;
      return items.find(
        (item: { family: string; key: string; state: string }) =>
          item.family === 'outboundDelivery' && item.key === parked && item.state === 'parked',
      );
    });
    expect(push).toMatchObject({
      lookup: `outbound-deliveries/${parked}`,
      retry: `portal-pushes/outbound-deliveries/${parked}/retry`,
    });

    deliveries.refusePut(parked, false);
    expect((await api('POST', `/api/${mail.retry}`)).status).toBe(200);
    expect((await api('POST', `/api/${push.retry}`)).body).toMatchObject({
      deliveryDocument: parked,
      state: 'pending',
    });
    await eventually('the retried email sent', async () => mailsOf(parked).length === 1);
    await eventually('the retried push taken', async () =>
      deliveries.puts(parked).some((put) => put.status === 200),
    );
    const { rows } = await world.db.pool.query(
      `select family, state from portal_push where key = $1 order by family`,
      [parked],
    );
    expect(rows).toEqual([
      { family: 'outboundDelivery', state: 'done' },
      { family: 'salesOrder', state: 'parked' },
    ]);
  });

  it('replays its dead letter once S/4HANA answers again', async () => {
    const late = newDelivery('A', first);
    deliveries.unavailable(late, true);
    await publish(deliveryEvent(late, `evt-${late}-1`));
    const letter = await eventually(
      'the event refused at its delivery limit',
      async () => {
        const { rows } = await world.db.pool.query(
          `select id::text, family, key, reason from dead_letter where event_id = $1`,
          [`evt-${late}-1`],
        );
        return rows[0];
      },
      30_000,
    );
    expect(letter).toMatchObject({ family: 'outboundDelivery', key: late });
    deliveries.unavailable(late, false);

    const replay = await api('POST', `/api/dead-letters/${letter.id}/replay`);
    expect(replay.body).toMatchObject({ outcome: 'accept', result: 'applied' });
    expect(await processed(late)).toEqual([{ id: `evt-${late}-1`, outcome: 'applied', notification: 'new' }]);
    await eventually('its email', async () => mailsOf(late).length === 1);
  });

  it('lets retention remove what its expiries name, and only that', async () => {
    const planned = newDelivery('A', first);
    await publish(deliveryEvent(planned, `evt-${planned}-1`));
    await eventually('the planned delivery applied', async () => (await processed(planned)).length === 1);
    // Both older than the events' window; only a shipped delivery expires.
    await world.db.pool.query(
      `update outbound_delivery set updated_at = now() - interval '400 days'
       where delivery_document = any($1::text[])`,
      [[delivery, planned]],
    );
    const report = await service.retention.runOnce();
    expect(report.deleted.shippedDeliveries).toBe(1);
    const { rows } = await world.db.pool.query(
      `select delivery_document as "delivery" from outbound_delivery where delivery_document = any($1::text[])`,
      [[delivery, planned]],
    );
    expect(rows).toEqual([{ delivery: planned }]);
  });
});
