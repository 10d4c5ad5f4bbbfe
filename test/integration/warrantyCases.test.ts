// Customer returns and sales orders on one queue, end to end on the real PostgreSQL and RabbitMQ (AMQP 1.0), the
// S/4HANA stand-in, the real SMTP stand-in and the portal stand-in, two instances.
//
// What is correct: every return ends as one warranty_case row equal to S/4HANA's final state (withdrawn when it
// was deleted); each case gets one email per real change of its status, all in one conversation; each PUT that is
// not a retry (a new Idempotency-Key) carries a state of its own, and the portal ends holding the final state.
// The orders among them end as before. The stream carries duplicates (one id twice), redeliveries (a return whose
// first reads fail), several item events for one change, and a deletion.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type PortalServer, startPortalServer } from '../../sandbox/portalServer.js';
import { customerReturnEvent, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { CustomerReturnState } from '../../sandbox/s4Returns.js';
import type { Service } from '../../src/service/buildService.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { registerDestination } from '../support/destination.js';
import { startTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { returnState } from '../support/returns.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
let portal: PortalServer;
let queue: TestQueue;
const services: Service[] = [];

beforeAll(async () => {
  portal = await startPortalServer();
  queue = await createTestQueue('fon-returns');
  const portalDestination = registerDestination(portal.url);
  for (let i = 0; i < 2; i++) {
    services.push(
      await startTestService({
        ...world.endpoints(),
        queueAddress: queue.address,
        env: { PORTAL_DESTINATION: portalDestination, PORTAL_TIMEOUT_MS: '500' },
      }),
    );
  }
});
afterEach(() => world.s4.returns.setFault(undefined));
afterAll(async () => {
  await Promise.all(services.splice(0).map((service) => service.stop()));
  await queue?.delete();
  await portal?.close();
});

const { newOrder, changeOrder } = orderMaker(() => world.s4, 6_300_000);

/** Step `i` of a return: its status, and a customer reference that changes without the status in step 2. */
const STEPS: Array<Partial<CustomerReturnState>> = [
  { overallSDProcessStatus: 'A', customerReference: 'RMA-1' },
  { overallSDProcessStatus: 'B', customerReference: 'RMA-1' },
  { overallSDProcessStatus: 'B', customerReference: 'RMA-2' },
  { overallSDProcessStatus: 'C', customerReference: 'RMA-2' },
];
const CASE_STATUS = ['Open', 'InProcess', 'InProcess', 'Completed'];

function stepOf(customerReturn: string, i: number): CustomerReturnState {
  return returnState(customerReturn, {
    ...STEPS[i],
    lastChangeDateTime: new Date(Date.UTC(2026, 10, 30, 10, i)).toISOString(),
  });
}

async function processedOf(keys: { returns: string[]; orders: string[] }): Promise<number> {
  const { rows } = await world.db.pool.query<{ n: number }>(
    `select count(*)::int as "n" from processed_event
     where (family = 'customerReturn' and key = any($1::text[])) or (family = 'salesOrder' and key = any($2::text[]))`,
    [keys.returns, keys.orders],
  );
  return rows[0]?.n ?? 0;
}

/** Every event processed, the queue idle, and every email and push of the returns answered. */
async function settledAll(keys: { returns: string[]; orders: string[] }, events: number): Promise<void> {
  await eventually(`${events} processed events`, async () => (await processedOf(keys)) >= events, 60_000);
  await eventually('the queue to be idle', () => queue.isIdle(), 60_000);
  await eventually(
    'every email and push to be answered',
    async () => {
      const { rows } = await world.db.pool.query<{ n: number }>(
        `select (select count(*) from mail_outbox where state = 'pending')
              + (select count(*) from portal_push where state = 'pending') as "n"`,
      );
      return Number(rows[0]?.n) === 0;
    },
    60_000,
  );
}

describe('customer returns open warranty cases', () => {
  it('ends with one case per return equal to S/4HANA, one email per status change and one PUT per state', async () => {
    const returns = ['63000001', '63000002', '63000003', '63000004'];
    const deleted = returns[3] as string;
    const orders = [newOrder(), newOrder()];
    const keys = { returns, orders };
    // The first reads of one return fail: its events are released and redelivered.
    world.s4.returns.setFault((customerReturn, callNo) =>
      customerReturn === returns[0] && callNo <= 6 ? 'unavailable' : 'ok',
    );
    let events = 0;
    for (let i = 0; i < STEPS.length; i++) {
      const stream = [];
      for (const customerReturn of returns) {
        if (customerReturn === deleted && i >= 2) continue;
        world.s4.returns.setReturn(stepOf(customerReturn, i));
        const id = `${customerReturn}-${i}`;
        const change = i === 0 ? 'Created' : 'Changed';
        // One change announced by the header and two item events, the header's delivered twice.
        stream.push(
          { body: customerReturnEvent(customerReturn, change, { id }) },
          { body: customerReturnEvent(customerReturn, 'ItemChanged') },
          { body: customerReturnEvent(customerReturn, change, { id }) },
          { body: customerReturnEvent(customerReturn, 'ItemCreated') },
        );
        events += 3;
      }
      if (i === 2) {
        world.s4.returns.deleteReturn(deleted);
        stream.push({ body: customerReturnEvent(deleted, 'Deleted') });
        events += 1;
      }
      for (const salesOrder of orders) {
        changeOrder(salesOrder, {
          overallSDProcessStatus: i === 0 ? 'A' : 'B',
          customerReference: `PO-${i}`,
          lastChangeDateTime: new Date(Date.UTC(2026, 10, 30, 10, i)).toISOString(),
        });
        stream.push({ body: salesOrderEvent({ salesOrder }) });
        events += 1;
      }
      await world.publisher.send(queue.address, stream);
      // Each step is read before the next: every status is seen, so each gets its email.
      await settledAll(keys, events);
    }

    const last = STEPS.length - 1;
    for (const customerReturn of returns) {
      const { rows } = await world.db.pool.query(
        `select case_status as "caseStatus", customer_reference as "customerReference",
           s4_changed_at as "changedAt"
         from warranty_case where customer_return = $1`,
        [customerReturn],
      );
      const final = customerReturn === deleted ? 1 : last;
      expect(rows).toEqual([
        {
          caseStatus: customerReturn === deleted ? 'Withdrawn' : CASE_STATUS[last],
          customerReference: STEPS[final]?.customerReference,
          changedAt: new Date(stepOf(customerReturn, final).lastChangeDateTime),
        },
      ]);

      const mails = world.smtp.messages.filter(
        (mail) => mail.headers['x-customer-return'] === customerReturn,
      );
      const statuses = mails.map((mail) => mail.headers['x-case-status']);
      expect(statuses).toEqual(
        customerReturn === deleted ? ['Open', 'InProcess', 'Withdrawn'] : ['Open', 'InProcess', 'Completed'],
      );
      const [first, ...later] = mails;
      for (const mail of later) expect(mail.headers['in-reply-to']).toBe(first?.messageId);

      const requests = portal.caseRequests(customerReturn);
      const bodies = new Map(
        requests.map((request) => [request.idempotencyKey, JSON.stringify(request.body)]),
      );
      expect(new Set(bodies.values()).size).toBe(bodies.size);
      expect(portal.caseState(customerReturn)).toMatchObject({
        customerReturn,
        caseStatus: customerReturn === deleted ? 'Withdrawn' : 'Completed',
        customerReference: STEPS[final]?.customerReference,
        salesOrder: '1000473',
        returnReasons: ['009', '103'],
        s4ChangedAt: stepOf(customerReturn, final).lastChangeDateTime,
      });
    }

    for (const salesOrder of orders) {
      const { rows } = await world.db.pool.query(
        `select portal_status as "portalStatus", customer_reference as "customerReference"
         from portal_order_status where sales_order = $1`,
        [salesOrder],
      );
      expect(rows).toEqual([{ portalStatus: 'InProcess', customerReference: `PO-${last}` }]);
      expect(portal.state(salesOrder)?.customerReference).toBe(`PO-${last}`);
    }
    // The failing reads made the first return's events come again, and nothing was refused.
    const redelivered = await world.db.pool.query(
      `select max(attempts)::int as "n" from processed_event where family = 'customerReturn' and key = $1`,
      [returns[0]],
    );
    expect(redelivered.rows[0].n).toBeGreaterThan(1);
    const { rows } = await world.db.pool.query(`select count(*)::int as "n" from dead_letter`);
    expect(rows).toEqual([{ n: 0 }]);
  }, 180_000);
});
