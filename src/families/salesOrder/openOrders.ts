// Counts the portal shows, derived from each order's state in portal_order_status and never incremented: a
// duplicate or a redelivery changes no order's state, so it cannot change a count either.
import type { Executor } from '../../db/transaction.js';

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
