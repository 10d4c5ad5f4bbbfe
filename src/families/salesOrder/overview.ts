// What the admin API knows of a sales order (GET /api/orders/{salesOrder}): the portal row, the notified pair,
// its emails (never their addresses) and its processed events, newest first.
import type { Executor } from '../../db/transaction.js';
import { MAIL_COLUMNS } from '../../http/adminQueries.js';

/** Most rows of each history an order overview returns, newest first. */
const HISTORY_LIMIT = 100;

export async function orderOverview(db: Executor, salesOrder: string) {
  const [portal, notification, mails, events] = await Promise.all([
    db.query(
      `select portal_status as "portalStatus",
              to_char(requested_delivery_date, 'YYYY-MM-DD') as "requestedDeliveryDate",
              sold_to_party as "soldToParty", customer_reference as "customerReference",
              s4_changed_at as "s4ChangedAt", s4_read_at as "s4ReadAt", updated_at as "updatedAt"
       from portal_order_status where sales_order = $1::text`,
      [salesOrder],
    ),
    db.query(
      `select portal_status as "portalStatus",
              to_char(requested_delivery_date, 'YYYY-MM-DD') as "requestedDeliveryDate", notified_at as "notifiedAt",
              thread_message_id as "threadMessageId"
       from order_notification where sales_order = $1::text`,
      [salesOrder],
    ),
    db.query(
      `select ${MAIL_COLUMNS} from mail_outbox where sales_order = $1::text order by id desc limit $2::int`,
      [salesOrder, HISTORY_LIMIT],
    ),
    db.query(
      `select source, id, type, outcome, processed_at as "processedAt" from processed_event
       where sales_order = $1::text order by processed_at desc limit $2::int`,
      [salesOrder, HISTORY_LIMIT],
    ),
  ]);
  if (portal.rowCount === 0 && notification.rowCount === 0 && mails.rowCount === 0 && events.rowCount === 0) {
    return null;
  }
  return {
    salesOrder,
    portal: portal.rows[0] ?? null,
    notification: notification.rows[0] ?? null,
    mails: mails.rows,
    events: events.rows,
  };
}
