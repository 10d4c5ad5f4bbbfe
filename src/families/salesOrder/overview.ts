// What the admin API knows of a sales order (GET /api/orders/{salesOrder}): its portal row, the pair last notified,
// its emails with what each said (never their addresses) and its processed events, newest first.
// Dates are formatted in SQL: pg would turn a `date` into a local-midnight Date object.
import type { Executor } from '../../db/transaction.js';

/** Most rows of each history an order overview returns, newest first. */
const HISTORY_LIMIT = 100;

// What each email said comes from its content, as effect.ts writes it.
const MAIL_COLUMNS = `id::text as "id", content->>'portalStatus' as "portalStatus",
  content->>'requestedDeliveryDate' as "requestedDeliveryDate", state, attempts,
  created_at as "createdAt", sent_at as "sentAt", next_attempt_at as "nextAttemptAt",
  last_error as "lastError", message_id as "messageId", change,
  content->>'previousPortalStatus' as "previousPortalStatus",
  content->>'previousRequestedDeliveryDate' as "previousRequestedDeliveryDate", locale,
  in_reply_to as "inReplyTo"`;

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
      `select ${MAIL_COLUMNS} from mail_outbox where family = 'salesOrder' and key = $1::text
       order by id desc limit $2::int`,
      [salesOrder, HISTORY_LIMIT],
    ),
    db.query(
      `select source, id, type, outcome, processed_at as "processedAt" from processed_event
       where family = 'salesOrder' and key = $1::text order by processed_at desc limit $2::int`,
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
