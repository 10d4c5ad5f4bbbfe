// Open-order counts per sold-to party (the view portal_open_orders), derived from each order's state: however
// often the broker delivers an event, the counts equal a recount from S/4HANA's final state of the orders.
import { describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import type { SalesOrderState } from '../../sandbox/s4Server.js';
import { observe } from '../support/observe.js';
import { useService } from '../support/useService.js';
import { settled } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
const view = observe(world);
const running = useService(world, { queue: 'fon-open-orders' });

const PARTIES = ['17100001', '17100002', '17100003'];
// Open, in process, partly delivered, blocked, delivered, rejected: the last two are not open.
const FINAL_STATES: Array<Partial<SalesOrderState>> = [
  { overallSDProcessStatus: 'A' },
  { overallSDProcessStatus: 'B' },
  { overallSDProcessStatus: 'B', overallDeliveryStatus: 'B' },
  { overallSDProcessStatus: 'A', deliveryBlockReason: '01' },
  { overallSDProcessStatus: 'C', overallDeliveryStatus: 'C' },
  { overallSDProcessStatus: 'C', rejectionStatus: 'C' },
];

/** The count from S/4HANA's own fields, independent of the service's status rules. */
function recount(states: SalesOrderState[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const state of states) {
    if (state.overallDeliveryStatus === 'C' || state.rejectionStatus === 'C') continue;
    const party = state.soldToParty as string;
    counts[party] = (counts[party] ?? 0) + 1;
  }
  return counts;
}

describe('open orders per sold-to party', () => {
  it('counts exactly what S/4HANA final state says, under duplicates, redeliveries and several events per change', async () => {
    const orders: string[] = [];
    let nextOrder = 7_600_000;
    // 3 parties × 6 final states × 2 orders each; every order first Open, then its final state.
    for (const soldToParty of PARTIES)
      for (const _final of FINAL_STATES)
        for (let copy = 0; copy < 2; copy++) {
          const salesOrder = String(nextOrder++);
          orders.push(salesOrder);
          world.s4.setOrder({
            salesOrder,
            soldToParty,
            customerReference: `PO-${salesOrder}`,
            requestedDeliveryDate: '2026-12-01',
            lastChangeDateTime: '2026-11-30T10:00:00Z',
            overallSDProcessStatus: 'A',
            ...{ overallDeliveryStatus: '', rejectionStatus: '', deliveryBlockReason: '' },
          });
        }
    const every = (round: number) =>
      orders.flatMap((salesOrder) => {
        const id = `${salesOrder}-${round}`;
        return [{ body: salesOrderEvent({ salesOrder, id }) }, { body: salesOrderEvent({ salesOrder, id }) }];
      });
    await world.publisher.send(running.queue.address, every(0));
    await settled(view, [running.queue], orders, orders.length, 60_000);

    let i = 0;
    for (const soldToParty of PARTIES)
      for (const final of FINAL_STATES)
        for (let copy = 0; copy < 2; copy++) {
          const salesOrder = orders[i++] as string;
          const current = world.s4.getOrder(salesOrder) as SalesOrderState;
          world.s4.setOrder({
            ...current,
            soldToParty,
            lastChangeDateTime: '2026-11-30T11:00:00Z',
            ...final,
          });
        }
    // Reads fail at first for a third of the orders: those events are released and redelivered.
    const flaky = new Set(orders.filter((_, index) => index % 3 === 0));
    const failures = new Map<string, number>();
    world.s4.setFault((salesOrder) => {
      if (!flaky.has(salesOrder)) return 'ok';
      const seen = failures.get(salesOrder) ?? 0;
      failures.set(salesOrder, seen + 1);
      return seen < 4 ? 'unavailable' : 'ok';
    });
    // Two events per change, each delivered twice, and an unrelated re-read of every order.
    await world.publisher.send(running.queue.address, [...every(1), ...every(2)]);
    await settled(view, [running.queue], orders, orders.length * 3, 90_000);
    world.s4.setFault(undefined);

    const expected = recount(orders.map((salesOrder) => world.s4.getOrder(salesOrder) as SalesOrderState));
    expect(expected).toEqual({ '17100001': 8, '17100002': 8, '17100003': 8 });
    const { rows } = await world.db.pool.query<{ soldToParty: string; openOrders: number }>(
      `select sold_to_party as "soldToParty", open_orders as "openOrders" from portal_open_orders`,
    );
    expect(Object.fromEntries(rows.map((row) => [row.soldToParty, row.openOrders]))).toEqual(expected);

    const summary = (await running.service.app.inject({ method: 'GET', url: '/api/summary' })).json();
    expect(summary.openOrdersBySoldToParty).toEqual(
      PARTIES.map((soldToParty) => ({ soldToParty, openOrders: expected[soldToParty] })),
    );
    const metrics = (await running.service.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('fon_portal_orders{status="Delivered"} 6');
    expect(metrics).toContain('fon_portal_orders{status="Rejected"} 6');
    expect(metrics).toContain('fon_portal_orders{status="Open"} 6');
  }, 180_000);

  it('reads the view through its partial index of open orders', async () => {
    const { rows } = await world.db.pool.query<{ indexdef: string }>(
      `select indexdef from pg_indexes where indexname = 'portal_order_status_open'`,
    );
    expect(rows[0]?.indexdef).toContain('(sold_to_party)');
    const client = await world.db.pool.connect();
    try {
      await client.query('set enable_seqscan = off');
      const plan = await client.query(`explain select * from portal_open_orders`);
      expect(plan.rows.map((row) => Object.values(row)[0]).join('\n')).toContain('portal_order_status_open');
    } finally {
      await client.query('reset enable_seqscan');
      client.release();
    }
  });
});
