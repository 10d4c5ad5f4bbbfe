// Events of one order processed at the same time, in one instance and across two instances sharing a queue and a
// database, while the order's state in S/4HANA moves on between reads.
//
// What is correct here, and why the tests check exactly that:
// - S/4HANA's state of an order only moves forward, and every state here has a later LastChangeDateTime than the
//   one before. The portal must end at the newest state any event read: the event that read it is applied, since
//   no state is newer, and once applied nothing older may overwrite it.
// - A state "is applied" when an event that read it becomes the portal's current state. Every state here has its
//   own (status, requested delivery date) pair, so each applied state is a real change for the fleet manager and
//   is emailed exactly once, however many events read it.
// - A state that was superseded before it was applied (a newer state reached the portal first, so the event that
//   read the older one commits as stale) is never emailed. Hence the emails of an order, in the order they were
//   queued, name states in strictly increasing order: an older state mailed after a newer one would be a state
//   superseded and then applied anyway, and the same state twice would be one change mailed twice. The last email
//   names the portal's final state, and every emailed state is one S/4HANA actually served.
// - Which states get applied in between depends on timing, so the stochastic tests check these rules for whatever
//   interleaving happened; one test forces the stale interleaving to check its exact outcome.
import { afterEach, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import type { SalesOrderState } from '../../sandbox/s4Server.js';
import type { Service } from '../../src/service/buildService.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { type Gate, gate } from '../support/gate.js';
import { startTestService } from '../support/harness.js';
import { observe } from '../support/observe.js';
import { eventually, settled } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
const view = observe(world);
const queues: TestQueue[] = [];
const services: Service[] = [];
const gates: Gate[] = [];

afterEach(async () => {
  // A failed test may leave a read held: let it answer so that the instances can stop.
  for (const held of gates.splice(0)) held.open();
  await Promise.all(services.splice(0).map((service) => service.stop()));
  await Promise.all(queues.splice(0).map((queue) => queue.delete()));
  world.s4.setLatency(0);
});

async function newQueue(): Promise<TestQueue> {
  const queue = await createTestQueue('fon-ordering');
  queues.push(queue);
  return queue;
}

/** One instance of the service on `queue`; all instances share the database, S/4HANA and the mail relay. */
async function startInstance(queue: TestQueue, env: Record<string, string> = {}): Promise<Service> {
  const service = await startTestService({
    ...world.endpoints(),
    queueAddress: queue.address,
    env,
  });
  services.push(service);
  return service;
}

/** Reads held by a gate must not time out while the test orders them: far beyond any wait in these tests. */
const PATIENT = { S4_TIMEOUT_MS: '60000' };

function heldRead(): Gate {
  const held = gate();
  gates.push(held);
  return held;
}

let nextOrder = 5_100_000;
const DATES = ['2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04', '2026-12-05', '2026-12-06'];

/**
 * `count` states of a new order, each later than the one before and each with its own (status, date) pair:
 * the status steps through Open, InProcess, PartiallyDelivered, Delivered, and the date moves every time.
 */
function stateSequence(count: number): SalesOrderState[] {
  const salesOrder = String(nextOrder++);
  return Array.from({ length: count }, (_, i) => ({
    salesOrder,
    customerReference: `PO-${i}`,
    requestedDeliveryDate: DATES[i % DATES.length] as string,
    lastChangeDateTime: new Date(Date.UTC(2026, 10, 30, 10, i)).toISOString(),
    overallSDProcessStatus: i === 0 ? 'A' : 'B',
    overallDeliveryStatus: ['', '', 'B', 'C'][Math.min(i, 3)] as string,
  }));
}

/** Makes S/4HANA's state of each order move on with every read: read n answers state n, the last one from then on. */
function moveOnEveryRead(orders: SalesOrderState[][]): void {
  for (const states of orders) {
    world.s4.setOrder(states[0] as SalesOrderState);
    world.s4.scriptReads(
      states[0]?.salesOrder as string,
      states.map((state) => ({ state })),
    );
  }
}

/** The index of the state each read served, for an order scripted by `moveOnEveryRead`. */
function served(states: SalesOrderState[]): number[] {
  const reads = world.s4.calls(states[0]?.salesOrder as string);
  return Array.from({ length: reads }, (_, read) => Math.min(read, states.length - 1));
}

/** Processed events of the order as (id, outcome), in commit order. */
async function processed(salesOrder: string): Promise<Array<{ id: string; outcome: string }>> {
  return (await view.processed({ salesOrder })).map(({ id, outcome }) => ({ id, outcome }));
}

/** Checks the rules in the header for one order whose states were served as `read` (indices into `states`). */
async function expectConsistent(states: SalesOrderState[], read: number[]): Promise<void> {
  const salesOrder = states[0]?.salesOrder as string;
  expect(read.length).toBeGreaterThan(0);
  const newest = states[Math.max(...read)] as SalesOrderState;
  const portal = await view.portalRow(salesOrder);
  expect(portal?.customerReference).toBe(newest.customerReference);
  expect(portal?.date).toBe(newest.requestedDeliveryDate);

  const outbox = await view.outbox(salesOrder);
  const mailed = outbox.map((mail) => DATES.indexOf(mail.date ?? ''));
  // Strictly increasing: no state mailed twice, no superseded state mailed after a newer one.
  for (let i = 1; i < mailed.length; i++) expect(mailed[i]).toBeGreaterThan(mailed[i - 1] as number);
  expect(mailed.at(-1)).toBe(Math.max(...read));
  for (const index of mailed) expect(read).toContain(index);

  // What was queued is what the relay received, each email once.
  const received = view.mails(salesOrder).map((mail) => mail.messageId);
  expect(received.sort()).toEqual(outbox.map((mail) => mail.messageId).sort());
}

describe('events of one order processed at the same time', () => {
  it('ends at the newest state and emails each applied state once when two instances take a burst while the state moves', async () => {
    const queue = await newQueue();
    await Promise.all([startInstance(queue), startInstance(queue)]);
    const states = stateSequence(6);
    const salesOrder = states[0]?.salesOrder as string;
    moveOnEveryRead([states]);
    // Reads take a while, so the two instances' reads of the order overlap and events pile up behind them.
    world.s4.setLatency(30);

    await world.publisher.send(
      queue.address,
      Array.from({ length: 40 }, () => ({ body: salesOrderEvent({ salesOrder }) })),
    );
    await settled(view, queues, [salesOrder], 40);

    // Each of the 40 events is read (they are different events), so the state moved on between reads.
    expect(served(states).length).toBeGreaterThanOrEqual(2);
    await expectConsistent(states, served(states));
    const outcomes = (await processed(salesOrder)).map((row) => row.outcome);
    expect(outcomes).toHaveLength(40);
    expect(outcomes.every((outcome) => outcome === 'applied' || outcome === 'stale')).toBe(true);
  });

  it('keeps every order consistent when two instances take bursts of many orders at once', async () => {
    const queue = await newQueue();
    await Promise.all([startInstance(queue), startInstance(queue)]);
    const orders = Array.from({ length: 12 }, () => stateSequence(5));
    moveOnEveryRead(orders);
    // Slow enough that requests wait for company while others are in flight (batchedReads.ts, rule 3).
    world.s4.setLatency(50);

    const perOrder = 10;
    await world.publisher.send(
      queue.address,
      orders.flatMap((states) =>
        Array.from({ length: perOrder }, () => ({
          body: salesOrderEvent({ salesOrder: states[0]?.salesOrder as string }),
        })),
      ),
    );
    const keys = orders.map((states) => states[0]?.salesOrder as string);
    await settled(view, queues, keys, orders.length * perOrder);

    for (const states of orders) await expectConsistent(states, served(states));
  });

  it('never emails a state that an instance read before another instance applied a newer one', async () => {
    // Two queues, one per instance, so that each event reaches the instance this interleaving needs. The first
    // instance's read answers state A, but only once the second instance has read B and applied it. When A
    // arrives it is older than the portal's state: the event is recorded as stale and A is never mailed.
    const [first, second] = [await newQueue(), await newQueue()];
    await Promise.all([startInstance(first, PATIENT), startInstance(second, PATIENT)]);
    const [stateA, stateB] = stateSequence(2) as [SalesOrderState, SalesOrderState];
    const { salesOrder } = stateA;
    const readOfA = heldRead();
    world.s4.scriptReads(salesOrder, [{ state: stateA, until: readOfA.opened }, { state: stateB }]);

    await world.publisher.send(first.address, [
      { body: salesOrderEvent({ salesOrder, id: 'read-before-the-change' }) },
    ]);
    await eventually('the first read to be under way', async () => world.s4.calls(salesOrder) === 1);
    await world.publisher.send(second.address, [
      { body: salesOrderEvent({ salesOrder, id: 'read-after-the-change' }) },
    ]);
    await eventually('the newer state applied', async () => (await processed(salesOrder)).length === 1);
    readOfA.open();
    await settled(view, queues, [salesOrder], 2);

    expect(await processed(salesOrder)).toEqual([
      { id: 'read-after-the-change', outcome: 'applied' },
      { id: 'read-before-the-change', outcome: 'stale' },
    ]);
    expect(world.s4.calls(salesOrder)).toBe(2);
    expect((await view.portalRow(salesOrder))?.date).toBe(stateB.requestedDeliveryDate);
    expect((await view.outbox(salesOrder)).map((mail) => mail.date)).toEqual([stateB.requestedDeliveryDate]);
    expect(view.mails(salesOrder)).toHaveLength(1);
  });

  it('writes nothing for a delivery that loses the race to record the same event in another instance', async () => {
    // The same event reaches both instances (one queue each). Both pass the identity check before either
    // commits, since the first instance's read of state A is held until the second instance has read too. The
    // first then commits; the second read, answering the newer state B, is released only after that commit, so
    // the second delivery finds the event recorded. The event's effect is the first delivery's: B is left to
    // the event that announces it.
    const [first, second] = [await newQueue(), await newQueue()];
    const [, secondInstance] = await Promise.all([
      startInstance(first, PATIENT),
      startInstance(second, PATIENT),
    ]);
    const [stateA, stateB] = stateSequence(2) as [SalesOrderState, SalesOrderState];
    const { salesOrder } = stateA;
    const [readOfA, readOfB] = [heldRead(), heldRead()];
    world.s4.scriptReads(salesOrder, [
      { state: stateA, until: readOfA.opened },
      { state: stateB, until: readOfB.opened },
    ]);
    const event = salesOrderEvent({ salesOrder, id: 'delivered-twice' });

    await world.publisher.send(first.address, [{ body: event }]);
    await eventually('the first read to be under way', async () => world.s4.calls(salesOrder) === 1);
    await world.publisher.send(second.address, [{ body: event }]);
    await eventually('the second read to be under way', async () => world.s4.calls(salesOrder) === 2);
    readOfA.open();
    await eventually('the first delivery committed', async () => (await processed(salesOrder)).length === 1);
    readOfB.open();
    await settled(view, queues, [salesOrder], 1);

    const metrics = await secondInstance.app.inject({ url: '/metrics' });
    expect(metrics.body).toContain(
      'fon_events_total{channel="amqp",outcome="duplicate",reason="",family="sales_order"} 1',
    );
    expect(await processed(salesOrder)).toEqual([{ id: 'delivered-twice', outcome: 'applied' }]);
    expect((await view.portalRow(salesOrder))?.date).toBe(stateA.requestedDeliveryDate);
    expect((await view.outbox(salesOrder)).map((mail) => mail.date)).toEqual([stateA.requestedDeliveryDate]);
  });

  it('applies an event delivered to two instances at once exactly once', async () => {
    const queue = await newQueue();
    const instances = await Promise.all([startInstance(queue), startInstance(queue)]);
    const [state] = stateSequence(1) as [SalesOrderState];
    world.s4.setOrder(state);
    world.s4.setLatency(20);
    const event = salesOrderEvent({ salesOrder: state.salesOrder });

    await world.publisher.send(
      queue.address,
      Array.from({ length: 20 }, () => ({ body: event })),
    );
    // Settled: the queue holds nothing ready or unsettled, so all 20 copies have been handled.
    await settled(view, queues, [state.salesOrder], 1);

    const handled = await Promise.all(instances.map(acceptedCopies));
    expect(handled.reduce((sum, n) => sum + n, 0)).toBe(20);
    // Both took part: each instance settled some of the copies (the broker shares them between its consumers).
    expect(handled.map((n) => n > 0)).toEqual([true, true]);
    expect((await processed(state.salesOrder)).map((row) => row.outcome)).toEqual(['applied']);
    expect(await view.outbox(state.salesOrder)).toHaveLength(1);
    expect(view.mails(state.salesOrder)).toHaveLength(1);
    // Within an instance a redelivery waits for its original and finds it processed; across instances each may
    // have read once before either committed.
    expect(world.s4.calls(state.salesOrder)).toBeLessThanOrEqual(2);
  });
});

/** Deliveries an instance settled for good (everything but releases), from its /metrics. */
async function acceptedCopies(instance: Service): Promise<number> {
  const { body } = await instance.app.inject({ url: '/metrics' });
  const counted =
    /^fon_events_total\{channel="amqp",outcome="(\w+)",reason="[^"]*",family="sales_order"\} (\d+)$/gm;
  let total = 0;
  for (const [, outcome, n] of body.matchAll(counted)) if (outcome !== 'released') total += Number(n);
  return total;
}
