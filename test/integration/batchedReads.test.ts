// S/4HANA reads as the service makes them, against the stand-in speaking each API version: bursts read in few
// collection requests, also while a read is in flight, the read-after-arrival rule inside a batch, the fallback
// when a filter is refused, and the pause on 429 with Retry-After. Request counts and times come from the
// stand-in's own log, not the service's.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import type { LoggedRequest } from '../../sandbox/s4Server.js';
import type { Service } from '../../src/service/buildService.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { type Gate, gate } from '../support/gate.js';
import { startTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
let queue: TestQueue;
let service: Service | undefined;
const holds: Gate[] = [];

beforeEach(async () => {
  queue = await createTestQueue('fon-batch');
});
afterEach(async () => {
  await service?.stop();
  service = undefined;
  await queue.delete();
  world.s4.setFault(undefined);
  world.s4.setLatency(0);
  world.s4.refuseFilters(false);
  world.s4.setRetryAfter(1);
  for (const held of holds.splice(0)) held.open();
});

const { newOrder, changeOrder } = orderMaker(() => world.s4, 6_100_000);

/** The stand-in's log of the requests that asked for any of `orders`. */
function requestsFor(orders: readonly string[]): LoggedRequest[] {
  const wanted = new Set(orders);
  return world.s4.requestLog().filter((request) => request.salesOrders.some((order) => wanted.has(order)));
}

async function processed(orders: readonly string[]): Promise<number> {
  const { rows } = await world.db.pool.query<{ n: number }>(
    `select count(*)::int as n from processed_event where family = 'salesOrder' and key = any($1::text[])`,
    [orders],
  );
  return rows[0]?.n ?? 0;
}

/** Dead letters in this file's database: none of its tests sends a message that deserves one. */
async function deadLetters(): Promise<number> {
  const { rows } = await world.db.pool.query<{ n: number }>('select count(*)::int as n from dead_letter');
  return rows[0]?.n ?? 0;
}

async function metric(name: string): Promise<number> {
  if (service === undefined) throw new Error('no service');
  const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body;
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/** Publishes one event per order; returns the events' ids. */
async function publish(orders: readonly string[]): Promise<string[]> {
  const ids = orders.map(() => randomUUID());
  await world.publisher.send(
    queue.address,
    orders.map((salesOrder, i) => ({ body: salesOrderEvent({ salesOrder, id: ids[i] }) })),
  );
  return ids;
}

/** Waits until the service has counted a delivery of each event: it is past the identity check, at its read. */
async function counted(ids: readonly string[]): Promise<void> {
  await eventually('the deliveries counted', async () => {
    const { rows } = await world.db.pool.query<{ n: number }>(
      'select count(*)::int as n from event_attempt where id = any($1::text[])',
      [ids],
    );
    return rows[0]?.n === ids.length;
  });
  // From the count to the read is a few local steps; give them time even on a loaded machine.
  await sleep(200);
}

/** Holds the next read of `salesOrder` in the stand-in until the returned gate opens. */
function holdNextRead(salesOrder: string): Gate {
  const held = gate();
  holds.push(held);
  world.s4.scriptReads(salesOrder, [{ until: held.opened }, {}]);
  return held;
}

describe.each(['v2', 'v4'] as const)('S/4HANA reads over OData %s', (api) => {
  const start = async (env: Record<string, string> = {}, logLines?: string[]) => {
    service = await startTestService({
      ...world.endpoints(),
      queueAddress: queue.address,
      env: { S4_API: api, ...env },
      logLines,
    });
  };

  it('applies the order and emails once, end to end', async () => {
    await start();
    const salesOrder = newOrder({ overallDeliveryStatus: 'B', requestedDeliveryDate: '2026-12-24' });
    await publish([salesOrder]);
    await eventually('the event processed', async () => (await processed([salesOrder])) === 1);
    const { rows } = await world.db.pool.query(
      `select portal_status as "status", to_char(requested_delivery_date, 'YYYY-MM-DD') as "date",
              customer_reference as "reference", s4_changed_at as "changedAt"
       from portal_order_status where sales_order = $1`,
      [salesOrder],
    );
    expect(rows).toEqual([
      {
        status: 'PartiallyDelivered',
        date: '2026-12-24',
        reference: 'PO-4711',
        changedAt: new Date('2026-11-30T10:00:00Z'),
      },
    ]);
    await eventually('the email', async () =>
      world.smtp.messages.some((mail) => mail.headers['x-sales-order'] === salesOrder),
    );
    const mails = world.smtp.messages.filter((mail) => mail.headers['x-sales-order'] === salesOrder);
    expect(mails.map((mail) => mail.headers['x-portal-status'])).toEqual(['PartiallyDelivered']);
    expect(requestsFor([salesOrder]).map((request) => request.api)).toEqual([api]);
  });

  it('reads a burst of events over many orders in far fewer requests than orders, each order once', async () => {
    world.s4.setLatency(150);
    await start();
    const orders = Array.from({ length: 120 }, () => newOrder());
    await publish(orders);
    await eventually(
      'every event processed',
      async () => (await processed(orders)) === orders.length,
      30_000,
    );
    const requests = requestsFor(orders);
    expect(requests.length).toBeLessThanOrEqual(orders.length / 4);
    expect(requests.some((request) => request.collection && request.salesOrders.length > 1)).toBe(true);
    for (const order of orders) expect(world.s4.calls(order)).toBe(1);
    expect(await metric('fon_s4_requests_total{result="ok"}')).toBe(requests.length);
  });

  it('sends one request per order with S4_READ_BATCH=1', async () => {
    world.s4.setLatency(100);
    await start({ S4_READ_BATCH: '1' });
    const orders = Array.from({ length: 20 }, () => newOrder());
    await publish(orders);
    await eventually('every event processed', async () => (await processed(orders)) === orders.length);
    const requests = requestsFor(orders);
    expect(requests.every((request) => !request.collection && request.salesOrders.length === 1)).toBe(true);
    expect(requests).toHaveLength(orders.length);
  });

  it('reads the orders of a burst that arrives while a read is in flight in fewer requests than orders', async () => {
    world.s4.setLatency(200);
    // Eight requests at once: sent as they arrived, the six orders would take six of them.
    await start({ S4_MAX_CONCURRENT_READS: '8', S4_TIMEOUT_MS: '20000' });
    // A request of 200 ms: from then on a request waits up to 20 ms for company while another is in flight.
    const first = newOrder();
    await publish([first]);
    await eventually('the first event processed', async () => (await processed([first])) === 1);
    const busy = newOrder();
    const held = holdNextRead(busy);
    await publish([busy]);
    await eventually('a read in flight', async () => requestsFor([busy]).length === 1);
    const burst = Array.from({ length: 6 }, () => newOrder());
    await publish(burst);
    await eventually('the burst processed', async () => (await processed(burst)) === burst.length);
    held.open();

    // How many requests the gather makes depends on how far apart the events reach the read (one request per
    // 20 ms of spread, one or two on an idle machine, more on a loaded one); one each is what it prevents.
    const requests = requestsFor(burst);
    expect(requests.length).toBeLessThan(burst.length);
    expect(requests.some((request) => request.collection && request.salesOrders.length > 1)).toBe(true);
    for (const order of burst) expect(world.s4.calls(order)).toBe(1);
  });

  it('gives an event that arrives while its order is being read in a batch a later read, which sees the change', async () => {
    // One request at a time, so orders that wait behind a held read go out together as one collection read.
    await start({ S4_MAX_CONCURRENT_READS: '1', S4_TIMEOUT_MS: '20000' });
    const filler = newOrder();
    const fillerRead = holdNextRead(filler);
    await publish([filler]);
    await eventually('the filler read under way', async () => requestsFor([filler]).length === 1);
    const watched = newOrder({ overallDeliveryStatus: '' });
    const batchRead = holdNextRead(watched);
    await counted(await publish([watched, newOrder(), newOrder()]));
    fillerRead.open();
    const batch = await eventually('the batched read of the watched order', async () =>
      requestsFor([watched]).find((request) => request.salesOrders.length > 1),
    );
    // The batch is in flight, its answer already taken: S/4HANA changes the order and announces it.
    changeOrder(watched, { overallDeliveryStatus: 'C', lastChangeDateTime: '2026-11-30T11:00:00Z' });
    const announcedAt = Date.now();
    await counted(await publish([watched]));
    batchRead.open();

    await eventually('both events of the order processed', async () => (await processed([watched])) === 2);
    const { rows } = await world.db.pool.query<{ status: string }>(
      'select portal_status as "status" from portal_order_status where sales_order = $1',
      [watched],
    );
    expect(rows[0]?.status).toBe('Delivered');
    const reads = requestsFor([watched]);
    expect(reads).toHaveLength(2);
    expect(reads[0]).toBe(batch);
    expect(reads[1]?.at).toBeGreaterThanOrEqual(announcedAt);
  });

  it('falls back to one order per request when S/4HANA refuses the filter with 400, warning once', async () => {
    world.s4.refuseFilters(true);
    const lines: string[] = [];
    await start({ S4_MAX_CONCURRENT_READS: '1', S4_TIMEOUT_MS: '20000', LOG_LEVEL: 'warn' }, lines);
    const filler = newOrder();
    const fillerRead = holdNextRead(filler);
    await publish([filler]);
    await eventually('the filler read under way', async () => requestsFor([filler]).length === 1);
    const orders = Array.from({ length: 6 }, () => newOrder());
    await counted(await publish(orders));
    fillerRead.open();
    await eventually('every event processed', async () => (await processed(orders)) === orders.length);

    const requests = requestsFor(orders);
    const refused = requests.filter((request) => request.refused);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.salesOrders.length).toBeGreaterThan(1);
    const after = requests.slice(requests.indexOf(refused[0] as LoggedRequest) + 1);
    expect(after.every((request) => !request.collection && request.salesOrders.length === 1)).toBe(true);
    for (const order of orders) expect(after.filter((r) => r.salesOrders[0] === order)).toHaveLength(1);
    expect(lines.filter((line) => line.includes('refused a collection read'))).toHaveLength(1);
    expect(await deadLetters()).toBe(0);
    expect(await metric('fon_s4_requests_total{result="refused"}')).toBe(1);
  });

  it('pauses every read for Retry-After: 2 after a 429, then reads everything, dead-lettering nothing', async () => {
    world.s4.setRetryAfter(2);
    await start();
    const first = newOrder();
    world.s4.setFault((order, callNo) => (order === first && callNo === 1 ? 'tooMany' : 'ok'));
    await publish([first]);
    const throttled = await eventually('the throttled read', async () => requestsFor([first])[0]);
    // Orders announced during the pause wait for it too.
    const during = Array.from({ length: 5 }, () => newOrder());
    await publish(during);
    const all = [first, ...during];
    await eventually('every event processed', async () => (await processed(all)) === all.length);

    const later = requestsFor(all).filter((request) => request !== throttled);
    expect(later.length).toBeGreaterThan(0);
    // The service pauses from the moment the 429 arrived, which is after the stand-in logged the request.
    for (const request of later) expect(request.at - throttled.at).toBeGreaterThanOrEqual(1990);
    expect(world.s4.calls(first)).toBe(2);
    expect(await deadLetters()).toBe(0);
    expect(await queue.drainDeadLetters()).toEqual([]);
    expect(await metric('fon_s4_throttled_seconds_total')).toBe(2);
    expect(await metric('fon_s4_requests_total{result="throttled"}')).toBe(1);
  });
});
