// Pushing each order's state to the fleet portal's HTTP API through the push outbox, end to end on the real
// PostgreSQL and RabbitMQ (AMQP 1.0), a local S/4HANA and the portal stand-in (sandbox/portalServer.ts).
//
// What is correct: the portal ends holding S/4HANA's final state of every order; each PUT that is not a retry of
// an earlier one (a new Idempotency-Key) carries a state of its own, since unchanged states queue nothing; and
// since the pushes of one order go one at a time in the order they were queued, no PUT carries an s4ChangedAt
// older than one the portal accepted before for that order.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type PortalRequest, type PortalServer, startPortalServer } from '../../sandbox/portalServer.js';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import type { SalesOrderState } from '../../sandbox/s4Server.js';
import type { Service } from '../../src/service/buildService.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { registerDestination } from '../support/destination.js';
import { startTestService } from '../support/harness.js';
import { observe } from '../support/observe.js';
import { eventually, settled } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
const view = observe(world);
let portal: PortalServer;
let portalDestination: string;
let queue: TestQueue;
const services: Service[] = [];

beforeAll(async () => {
  portal = await startPortalServer();
  portalDestination = registerDestination(portal.url);
});
afterAll(() => portal.close());
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.stop()));
  await queue?.delete();
  world.s4.setFault(undefined);
});

async function startInstances(count: number, env: Record<string, string> = {}): Promise<Service[]> {
  queue = await createTestQueue('fon-portal');
  const started = await Promise.all(
    Array.from({ length: count }, () =>
      startTestService({
        ...world.endpoints(),
        queueAddress: queue.address,
        env: { PORTAL_DESTINATION: portalDestination, PORTAL_TIMEOUT_MS: '500', ...env },
      }),
    ),
  );
  services.push(...started);
  return started;
}

let nextOrder = 7_300_000;
const STATUS_STEPS = [
  { overallSDProcessStatus: 'A', overallDeliveryStatus: '', portalStatus: 'Open' },
  { overallSDProcessStatus: 'B', overallDeliveryStatus: '', portalStatus: 'InProcess' },
  { overallSDProcessStatus: 'B', overallDeliveryStatus: 'B', portalStatus: 'PartiallyDelivered' },
  { overallSDProcessStatus: 'C', overallDeliveryStatus: 'C', portalStatus: 'Delivered' },
];

/** State `i` of an order: each a minute later than the one before, each with its own status and date. */
function stateOf(salesOrder: string, i: number): SalesOrderState {
  const { portalStatus: _, ...step } = STATUS_STEPS[i % STATUS_STEPS.length] as (typeof STATUS_STEPS)[number];
  return {
    salesOrder,
    soldToParty: '17100001',
    customerReference: `NFL-${salesOrder}-${i}`,
    requestedDeliveryDate: `2026-12-${String(i + 1).padStart(2, '0')}`,
    lastChangeDateTime: new Date(Date.UTC(2026, 10, 30, 10, i)).toISOString(),
    ...step,
  };
}

/** The body the portal must hold for an S/4HANA state: the push contract's fields. */
function expectedBody(state: SalesOrderState, i: number) {
  return {
    salesOrder: state.salesOrder,
    portalStatus: STATUS_STEPS[i % STATUS_STEPS.length]?.portalStatus,
    requestedDeliveryDate: state.requestedDeliveryDate,
    soldToParty: state.soldToParty,
    customerReference: state.customerReference,
    s4ChangedAt: state.lastChangeDateTime,
  };
}

const event = (salesOrder: string, id?: string) => ({
  body: salesOrderEvent({ salesOrder, ...(id && { id }) }),
});

/** Checks the PUTs one order's portal received against the rules in the header. */
function expectOrderedPushes(requests: PortalRequest[]): void {
  const firstOfKey = new Map<string, PortalRequest>();
  let newestAccepted = '';
  for (const request of requests) {
    expect(request.contentType).toBe('application/json');
    expect(request.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    const changedAt = request.body?.s4ChangedAt ?? '';
    expect(changedAt >= newestAccepted, `${changedAt} pushed after ${newestAccepted} was accepted`).toBe(
      true,
    );
    if (request.status >= 200 && request.status < 300)
      newestAccepted = request.body?.s4ChangedAt ?? newestAccepted;
    const first = firstOfKey.get(request.idempotencyKey as string);
    // A retry of a push repeats it exactly; a new push carries a state no earlier push carried.
    if (first !== undefined) expect(request.body).toEqual(first.body);
    else {
      const same = [...firstOfKey.values()].filter((earlier) => {
        const { s4ChangedAt: _a, ...shown } = earlier.body ?? ({} as never);
        const { s4ChangedAt: _b, ...now } = request.body ?? ({} as never);
        return JSON.stringify(shown) === JSON.stringify(now);
      });
      expect(same).toEqual([]);
      firstOfKey.set(request.idempotencyKey as string, request);
    }
  }
}

async function pushesSettled(salesOrders: string[]): Promise<void> {
  await eventually('every push to be done', async () => {
    const { rows } = await world.db.pool.query<{ done: number }>(
      `select count(*)::int as "done" from portal_push
       where family = 'salesOrder' and key = any($1::text[]) and state = 'done'`,
      [salesOrders],
    );
    return rows[0]?.done === salesOrders.length;
  });
}

async function pushCount(result: string): Promise<number> {
  const text = await (await services[0]?.app.inject({ method: 'GET', url: '/metrics' }))?.body;
  const line = text
    ?.split('\n')
    .find((candidate) => candidate.startsWith(`fon_portal_push_total{result="${result}"}`));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

/** One instance, and the first event of a new order, sent once `portalAnswers` has told the portal how to answer it. */
async function pushOneOrder(portalAnswers: (salesOrder: string) => void, env: Record<string, string> = {}) {
  const [service] = await startInstances(1, env);
  const salesOrder = String(nextOrder++);
  world.s4.setOrder(stateOf(salesOrder, 0));
  portalAnswers(salesOrder);
  await world.publisher.send(queue.address, [event(salesOrder)]);
  return { service: service as Service, salesOrder };
}

describe('pushing order states to the portal', () => {
  it('ends with S/4HANA final state of every order at the portal, one PUT per state, never an older after a newer', async () => {
    await startInstances(2);
    const orders = Array.from({ length: 6 }, () => String(nextOrder++));
    const steps = 4;
    // The first read of one order fails twice over: its events are released and redelivered.
    world.s4.setFault((salesOrder, callNo) =>
      salesOrder === orders[0] && callNo <= 6 ? 'unavailable' : 'ok',
    );
    let events = 0;
    for (let i = 0; i < steps; i++) {
      for (const salesOrder of orders) world.s4.setOrder(stateOf(salesOrder, i));
      // Several events per change, one of them delivered twice.
      const batch = orders.flatMap((salesOrder) => {
        const id = `${salesOrder}-${i}`;
        return [event(salesOrder, id), event(salesOrder), event(salesOrder, id)];
      });
      await world.publisher.send(queue.address, batch);
      events += orders.length * 2;
      // Pushes of earlier states may still be in flight when the next state comes: that is part of the test.
      if (i === 1) await pushesSettled(orders);
    }
    await settled(view, [queue], orders, events, 60_000);
    // An older state read late (a lagging read): stale, so nothing is pushed for it.
    const late = orders[1] as string;
    world.s4.scriptReads(late, [{ state: stateOf(late, 1) }, { state: stateOf(late, steps - 1) }]);
    await world.publisher.send(queue.address, [event(late)]);
    await settled(view, [queue], orders, events + 1, 60_000);
    await pushesSettled(orders);

    for (const salesOrder of orders) {
      expect(portal.state(salesOrder)).toEqual(expectedBody(stateOf(salesOrder, steps - 1), steps - 1));
      const requests = portal.requests(salesOrder);
      expectOrderedPushes(requests);
      // The state waited for in the middle of the stream was pushed.
      expect(requests.some((request) => request.body?.customerReference === `NFL-${salesOrder}-1`)).toBe(
        true,
      );
    }
  }, 120_000);

  it('retries a push the portal answers 503, after its Retry-After, until it is accepted', async () => {
    const { salesOrder } = await pushOneOrder((order) => portal.failNext('unavailable', 2, order));
    await eventually('the portal to hold the order', async () => portal.state(salesOrder), 30_000);
    const requests = portal.requests(salesOrder);
    expect(requests.map((request) => request.status)).toEqual([503, 503, 200]);
    expect(new Set(requests.map((request) => request.idempotencyKey)).size).toBe(1);
    // Retry-After: 1 is honoured on each retry.
    expect((requests[1]?.at ?? 0) - (requests[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(await pushCount('retry')).toBe(2);
    // Counted once the portal's answer is booked, a moment after the portal holds the order.
    await pushesSettled([salesOrder]);
    await eventually('the push to be counted as pushed', async () => (await pushCount('pushed')) === 1);
  }, 60_000);

  it('gives up on a portal that hangs past PORTAL_TIMEOUT_MS and pushes the same request again', async () => {
    const { salesOrder } = await pushOneOrder((order) => portal.failNext('hang', 1, order));
    await eventually('the portal to hold the order', async () => portal.state(salesOrder), 30_000);
    const requests = portal.requests(salesOrder);
    expect(requests.map((request) => request.status)).toEqual([0, 200]);
    expect(requests[1]?.idempotencyKey).toBe(requests[0]?.idempotencyKey);
    expect(requests[1]?.body).toEqual(requests[0]?.body);
    expect(await pushCount('retry')).toBe(1);
  }, 60_000);

  it('books a 409 as done and counts it as a conflict, without trying again', async () => {
    const { service, salesOrder } = await pushOneOrder((order) => portal.failNext('conflict', 1, order));
    await pushesSettled([salesOrder]);
    const { rows } = await world.db.pool.query(
      `select state, result from portal_push where family = 'salesOrder' and key = $1::text`,
      [salesOrder],
    );
    expect(rows).toEqual([{ state: 'done', result: 'conflict' }]);
    expect(await pushCount('conflict')).toBe(1);
    await service?.stop();
    expect(portal.requests(salesOrder).map((request) => request.status)).toEqual([409]);
  }, 60_000);

  it('parks a push the portal answers 400 and pushes it again when an operator retries it', async () => {
    const { service, salesOrder } = await pushOneOrder((order) => portal.failAlways(order, 'badRequest'));
    const app = service?.app;
    const parked = await eventually('the push to be parked', async () => {
      const listed = (await app?.inject({ method: 'GET', url: '/api/portal-pushes' }))?.json() as {
        items: Array<{ family: string; key: string; state: string; lastError: string }>;
      };
      return listed.items.find(
        (item) => item.family === 'salesOrder' && item.key === salesOrder && item.state === 'parked',
      );
    });
    expect(parked.lastError).toContain('portal answered 400');
    expect(await pushCount('parked')).toBe(1);
    const health = (await app?.inject({ method: 'GET', url: '/health' }))?.json();
    expect(health.checks.portalPush).toMatchObject({ parked: 1 });

    portal.failAlways(salesOrder, undefined);
    const retried = await app?.inject({ method: 'POST', url: `/api/portal-pushes/${salesOrder}/retry` });
    expect(retried?.statusCode).toBe(200);
    await eventually('the portal to hold the order', async () => portal.state(salesOrder), 30_000);
    const requests = portal.requests(salesOrder);
    expect(requests.map((request) => request.status)).toEqual([400, 200]);
    expect(requests[1]?.idempotencyKey).toBe(requests[0]?.idempotencyKey);
    const again = await app?.inject({ method: 'POST', url: `/api/portal-pushes/${salesOrder}/retry` });
    expect(again?.statusCode).toBe(409);
  }, 60_000);

  it('follows a push in flight with a push of the newer state queued meanwhile', async () => {
    const { salesOrder } = await pushOneOrder((order) => portal.failNext('hang', 1, order), {
      PORTAL_TIMEOUT_MS: '3000',
    });
    await eventually('the first push to be in flight', async () => portal.requests(salesOrder).length === 1);
    world.s4.setOrder(stateOf(salesOrder, 1));
    await world.publisher.send(queue.address, [event(salesOrder)]);
    await settled(view, [queue], [salesOrder], 2);
    await eventually('the portal to hold the newer state', async () =>
      portal.state(salesOrder)?.customerReference === `NFL-${salesOrder}-1` ? true : undefined,
    );
    const requests = portal.requests(salesOrder);
    // The newer state went once the first push had its answer (here: its timeout), never beside it.
    expect(requests.map((request) => [request.status, request.body?.customerReference])).toEqual([
      [0, `NFL-${salesOrder}-0`],
      [200, `NFL-${salesOrder}-1`],
    ]);
    expect(requests[1]?.idempotencyKey).not.toBe(requests[0]?.idempotencyKey);
    expect(requests[1]?.at ?? 0).toBeGreaterThanOrEqual((requests[0]?.at ?? 0) + 2900);
  }, 60_000);

  it('queues no push and calls no portal when PORTAL_DESTINATION is unset', async () => {
    await startInstances(1, { PORTAL_DESTINATION: '' });
    const salesOrder = String(nextOrder++);
    world.s4.setOrder(stateOf(salesOrder, 0));
    await world.publisher.send(queue.address, [event(salesOrder)]);
    await settled(view, [queue], [salesOrder], 1);
    expect((await view.portalRow(salesOrder))?.customerReference).toBe(`NFL-${salesOrder}-0`);
    const { rows } = await world.db.pool.query(
      `select from portal_push where family = 'salesOrder' and key = $1::text`,
      [salesOrder],
    );
    expect(rows).toEqual([]);
    expect(portal.requests(salesOrder)).toEqual([]);
    const health = (await services[0]?.app.inject({ method: 'GET', url: '/health' }))?.json();
    expect(health.checks).not.toHaveProperty('portalPush');
  }, 60_000);
});
