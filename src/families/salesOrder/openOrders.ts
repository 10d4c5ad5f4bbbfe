// Counts the portal shows, derived from each order's state in portal_order_status and never incremented: a
// duplicate or a redelivery changes no order's state, so it cannot change a count either. The family's part of
// GET /api/summary and of the metrics.
import type { Pool } from 'pg';
import type { Registry } from 'prom-client';
import type { Executor } from '../../db/transaction.js';
import { scrapedGaugeByLabel } from '../../telemetry/scrapedGauges.js';

/** Most sold-to parties GET /api/summary lists, those with the most open orders first. */
export const OPEN_ORDERS_TOP = 100;

/** Orders per portal status. */
export async function ordersByPortalStatus(db: Executor): Promise<Array<{ status: string; count: number }>> {
  const { rows } = await db.query<{ status: string; count: number }>(
    `select portal_status as "status", count(*)::int as "count" from portal_order_status group by portal_status`,
  );
  return rows;
}

/** The view portal_open_orders: orders neither Delivered nor Rejected, per sold-to party, most first. */
export async function openOrdersBySoldTo(
  db: Executor,
  limit = OPEN_ORDERS_TOP,
): Promise<Array<{ soldToParty: string | null; openOrders: number }>> {
  const { rows } = await db.query<{ soldToParty: string | null; openOrders: number }>(
    `select sold_to_party as "soldToParty", open_orders as "openOrders" from portal_open_orders
     order by open_orders desc, sold_to_party limit $1::int`,
    [limit],
  );
  return rows;
}

/** The family's counts in GET /api/summary. */
export async function orderCounts(db: Executor) {
  const [orders, openOrders] = await Promise.all([ordersByPortalStatus(db), openOrdersBySoldTo(db)]);
  return {
    ordersByPortalStatus: Object.fromEntries(orders.map((row) => [row.status, row.count])),
    /** From the view portal_open_orders: the sold-to parties with the most open orders, at most 100. */
    openOrdersBySoldToParty: openOrders,
  };
}

/** The family's gauge: fon_portal_orders. */
export function openOrderGauges(registry: Registry, pool: Pool): void {
  scrapedGaugeByLabel(
    registry,
    'fon_portal_orders',
    'Orders in portal_order_status, by portal status',
    'status',
    async () => (await ordersByPortalStatus(pool)).map(({ status, count }) => [status, count] as const),
  );
}
