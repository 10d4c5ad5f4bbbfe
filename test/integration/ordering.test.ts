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
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { S4Server, SalesOrderState } from '../../sandbox/s4Server.js';
import type { SmtpSink } from '../../sandbox/smtpServer.js';
import type { Service } from '../../src/service.js';
import { createTestQueue, type Publisher, type TestQueue } from '../support/broker.js';
import type { TestDatabase } from '../support/database.js';
import { eventually, salesOrderEvent, startTestService } from '../support/harness.js';
import { startWorld, stopWorld } from '../support/world.js';

let db: TestDatabase;
let s4: S4Server;
let smtp: SmtpSink;
let publisher: Publisher;
const queues: TestQueue[] = [];
const services: Service[] = [];

beforeAll(async () => {
  ({ db, s4, smtp, publisher } = await startWorld());
});
afterAll(() => stopWorld({ db, s4, smtp, publisher }));
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.stop()));
  await Promise.all(queues.splice(0).map((queue) => queue.delete()));
  s4.setFault(undefined);
  s4.setLatency(0);
});

async function newQueue(): Promise<TestQueue> {
  const queue = await createTestQueue('fon-ordering');
  queues.push(queue);
  return queue;
}

/** One instance of the service on `queue`; all instances share the database, S/4HANA and the mail relay. */
async function startInstance(queue: TestQueue): Promise<Service> {
  const service = await startTestService({
    databaseUrl: db.url,
    s4Url: s4.url,
    smtpUrl: smtp.url,
    queueAddress: queue.address,
  });
  services.push(service);
  return service;
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

/**
 * Makes S/4HANA's state of each order move on with every read of it: read n answers state n (the last one from
 * then on). Returns the index of every state served, per order, in the order served.
 */
function moveOnEveryRead(orders: SalesOrderState[][]): Map<string, number[]> {
  const sequences = new Map(orders.map((states) => [states[0]?.salesOrder as string, states]));
  const served = new Map<string, number[]>([...sequences.keys()].map((order) => [order, []]));
  for (const states of orders) s4.setOrder(states[0] as SalesOrderState);
  s4.setFault((salesOrder, callNo) => {
    const states = sequences.get(salesOrder);
    if (states === undefined) return 'ok';
    const index = Math.min(callNo, states.length) - 1;
    s4.setOrder(states[index] as SalesOrderState);
    served.get(salesOrder)?.push(index);
    return 'ok';
  });
  return served;
}

async function processed(salesOrder: string): Promise<Array<{ id: string; outcome: string }>> {
  const { rows } = await db.pool.query<{ id: string; outcome: string }>(
    `select id, outcome from processed_event where sales_order = $1 order by processed_at`,
    [salesOrder],
  );
  return rows;
}

async function portalRow(salesOrder: string) {
  const { rows } = await db.pool.query<{ portalStatus: string; date: string; customerReference: string }>(
    `select portal_status as "portalStatus", to_char(requested_delivery_date, 'YYYY-MM-DD') as "date",
            customer_reference as "customerReference"
     from portal_order_status where sales_order = $1`,
    [salesOrder],
  );
  return rows[0];
}

/** The order's emails in the order they were queued: the date names the state (each state has its own). */
async function queuedMail(salesOrder: string): Promise<Array<{ date: string; messageId: string }>> {
  const { rows } = await db.pool.query<{ date: string; messageId: string }>(
    `select to_char(requested_delivery_date, 'YYYY-MM-DD') as "date", message_id as "messageId"
     from mail_outbox where sales_order = $1 order by id`,
    [salesOrder],
  );
  return rows;
}

/** Waits until every event is processed, the queues are empty and every queued email has been sent. */
async function settled(orders: string[], events: number): Promise<void> {
  await eventually(
    `${events} processed events`,
    async () => {
      const { rows } = await db.pool.query<{ n: number }>(
        `select count(*)::int as "n" from processed_event where sales_order = any($1::text[])`,
        [orders],
      );
      return rows[0]?.n === events;
    },
    30_000,
  );
  await eventually('empty queues', async () =>
    (await Promise.all(queues.map((q) => q.depth()))).every((d) => d === 0),
  );
  await eventually('the outbox to be sent', async () => {
    const { rows } = await db.pool.query<{ n: number }>(
      `select count(*)::int as "n" from mail_outbox where sales_order = any($1::text[]) and state <> 'sent'`,
      [orders],
    );
    return rows[0]?.n === 0;
  });
}

/** Checks the rules in the header for one order whose states were served as `served` (indices into `states`). */
async function expectConsistent(states: SalesOrderState[], served: number[]): Promise<void> {
  const salesOrder = states[0]?.salesOrder as string;
  expect(served.length).toBeGreaterThan(0);
  const newest = states[Math.max(...served)] as SalesOrderState;
  expect((await portalRow(salesOrder))?.customerReference).toBe(newest.customerReference);
  expect((await portalRow(salesOrder))?.date).toBe(newest.requestedDeliveryDate);

  const mailed = (await queuedMail(salesOrder)).map((mail) => DATES.indexOf(mail.date));
  // Strictly increasing: no state mailed twice, no superseded state mailed after a newer one.
  for (let i = 1; i < mailed.length; i++) expect(mailed[i]).toBeGreaterThan(mailed[i - 1] as number);
  expect(mailed.at(-1)).toBe(Math.max(...served));
  for (const index of mailed) expect(served).toContain(index);

  // What was queued is what the relay received, each email once.
  const queued = (await queuedMail(salesOrder)).map((mail) => mail.messageId).sort();
  const received = smtp.messages
    .filter((mail) => mail.headers['x-sales-order'] === salesOrder)
    .map((mail) => mail.messageId)
    .sort();
  expect(received).toEqual(queued);
}

describe('events of one order processed at the same time', () => {
  it('ends at the newest state and emails each applied state once when two instances take a burst while the state moves', async () => {
    const queue = await newQueue();
    await Promise.all([startInstance(queue), startInstance(queue)]);
    const states = stateSequence(6);
    const salesOrder = states[0]?.salesOrder as string;
    const served = moveOnEveryRead([states]);
    // Reads take a while, so the two instances' reads of the order overlap and events pile up behind them.
    s4.setLatency(30);

    await publisher.send(
      queue.address,
      Array.from({ length: 40 }, () => ({ body: salesOrderEvent({ salesOrder }) })),
    );
    await settled([salesOrder], 40);

    // Both instances read (the broker hands the burst to both), so states were read concurrently.
    expect(served.get(salesOrder)?.length).toBeGreaterThanOrEqual(2);
    await expectConsistent(states, served.get(salesOrder) ?? []);
    const outcomes = (await processed(salesOrder)).map((row) => row.outcome);
    expect(outcomes.every((outcome) => outcome === 'applied' || outcome === 'stale')).toBe(true);
  });

  it('keeps every order consistent when two instances take bursts of many orders at once', async () => {
    const queue = await newQueue();
    await Promise.all([startInstance(queue), startInstance(queue)]);
    const orders = Array.from({ length: 12 }, () => stateSequence(5));
    const served = moveOnEveryRead(orders);
    s4.setLatency(10);

    const perOrder = 10;
    await publisher.send(
      queue.address,
      orders.flatMap((states) =>
        Array.from({ length: perOrder }, () => ({
          body: salesOrderEvent({ salesOrder: states[0]?.salesOrder as string }),
        })),
      ),
    );
    const keys = orders.map((states) => states[0]?.salesOrder as string);
    await settled(keys, orders.length * perOrder);

    for (const states of orders) {
      await expectConsistent(states, served.get(states[0]?.salesOrder as string) ?? []);
    }
  });

  it('never emails a state that an instance read before another instance applied a newer one', async () => {
    // Two queues, one per instance, so that each event reaches the instance this interleaving needs: the first
    // instance reads state A slowly; meanwhile S/4HANA moves to B, which the second instance reads and applies.
    // When A arrives it is older than the portal's state: the event is recorded as stale and A is never mailed.
    const [first, second] = [await newQueue(), await newQueue()];
    await Promise.all([startInstance(first), startInstance(second)]);
    const [stateA, stateB] = stateSequence(2) as [SalesOrderState, SalesOrderState];
    const { salesOrder } = stateA;
    s4.setOrder(stateA);
    s4.setFault((order, callNo) => {
      if (order !== salesOrder) return 'ok';
      if (callNo === 1) {
        s4.setOrder(stateA);
        s4.setLatency(600); // this read only: state A arrives 0.6 s from now (the harness times out at 1 s)
      } else {
        s4.setOrder(stateB);
        s4.setLatency(0);
      }
      return 'ok';
    });
    const older = salesOrderEvent({ salesOrder, id: 'read-before-the-change' });
    const newer = salesOrderEvent({ salesOrder, id: 'read-after-the-change' });

    await publisher.send(first.address, [{ body: older }]);
    await eventually('the first read to be under way', async () => s4.calls(salesOrder) === 1);
    await publisher.send(second.address, [{ body: newer }]);
    await settled([salesOrder], 2);

    expect(await processed(salesOrder)).toEqual([
      { id: 'read-after-the-change', outcome: 'applied' },
      { id: 'read-before-the-change', outcome: 'stale' },
    ]);
    expect((await portalRow(salesOrder))?.date).toBe(stateB.requestedDeliveryDate);
    expect((await queuedMail(salesOrder)).map((mail) => mail.date)).toEqual([stateB.requestedDeliveryDate]);
    expect(smtp.messages.filter((mail) => mail.headers['x-sales-order'] === salesOrder)).toHaveLength(1);
  });

  it('writes nothing for a delivery that loses the race to record the same event in another instance', async () => {
    // The same event reaches both instances (one queue each). The first reads state A and commits; the second
    // checked the event before that commit, so it reads too, gets the newer state B, and then finds the event
    // recorded. The event's effect is the first delivery's: B is left to the event that announces it.
    const [first, second] = [await newQueue(), await newQueue()];
    const [, secondInstance] = await Promise.all([startInstance(first), startInstance(second)]);
    const [stateA, stateB] = stateSequence(2) as [SalesOrderState, SalesOrderState];
    const { salesOrder } = stateA;
    s4.setOrder(stateA);
    s4.setFault((order, callNo) => {
      if (order !== salesOrder) return 'ok';
      s4.setOrder(callNo === 1 ? stateA : stateB);
      s4.setLatency(callNo === 1 ? 200 : 700); // this read only; the harness times out at 1 s
      return 'ok';
    });
    const event = salesOrderEvent({ salesOrder, id: 'delivered-twice' });

    await publisher.send(first.address, [{ body: event }]);
    await eventually('the first read to be under way', async () => s4.calls(salesOrder) === 1);
    await publisher.send(second.address, [{ body: event }]);
    await eventually('the second read', async () => s4.calls(salesOrder) === 2);
    await settled([salesOrder], 1);
    await eventually('the second delivery to end as a duplicate', async () => {
      const metrics = await secondInstance.app.inject({ url: '/metrics' });
      return metrics.body.includes('fon_events_total{channel="amqp",outcome="duplicate",reason=""} 1');
    });

    expect(await processed(salesOrder)).toEqual([{ id: 'delivered-twice', outcome: 'applied' }]);
    expect((await portalRow(salesOrder))?.date).toBe(stateA.requestedDeliveryDate);
    expect((await queuedMail(salesOrder)).map((mail) => mail.date)).toEqual([stateA.requestedDeliveryDate]);
  });

  it('applies an event delivered to two instances at once exactly once', async () => {
    const queue = await newQueue();
    await Promise.all([startInstance(queue), startInstance(queue)]);
    const [state] = stateSequence(1) as [SalesOrderState];
    s4.setOrder(state);
    s4.setLatency(20);
    const event = salesOrderEvent({ salesOrder: state.salesOrder });

    await publisher.send(
      queue.address,
      Array.from({ length: 20 }, () => ({ body: event })),
    );
    await settled([state.salesOrder], 1);

    expect((await processed(state.salesOrder)).map((row) => row.outcome)).toEqual(['applied']);
    expect(await queuedMail(state.salesOrder)).toHaveLength(1);
    expect(smtp.messages.filter((mail) => mail.headers['x-sales-order'] === state.salesOrder)).toHaveLength(
      1,
    );
    // Within an instance a redelivery waits for its original and finds it processed; across instances each may
    // have read once before either committed.
    expect(s4.calls(state.salesOrder)).toBeLessThanOrEqual(2);
  });
});
