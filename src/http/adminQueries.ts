// What the admin API reads: each table's statements live in the module that owns it; this composes them for
// the answers. Only the portal row and the notification state are read here, for the order overview.
// Dates are formatted in SQL: pg would turn a `date` into a local-midnight Date object.
import type { Executor } from '../db/transaction.js';
import { deadLetterForOperator, deadLettersOfEvent, unreplayedDeadLetters } from '../events/deadLetter.js';
import { attemptRecord, processedEventsOfOrder, processedRecord } from '../events/inbox.js';
import { mailCountsByState, mailsOfOrder } from '../notifications/outbox.js';
import { openOrdersBySoldTo, ordersByPortalStatus } from '../portal/openOrders.js';

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
    mailsOfOrder(db, salesOrder, HISTORY_LIMIT),
    processedEventsOfOrder(db, salesOrder, HISTORY_LIMIT),
  ]);
  if (portal.rowCount === 0 && notification.rowCount === 0 && mails.length === 0 && events.length === 0) {
    return null;
  }
  return {
    salesOrder,
    portal: portal.rows[0] ?? null,
    notification: notification.rows[0] ?? null,
    mails,
    events,
  };
}

export async function eventHistory(db: Executor, source: string, id: string) {
  const identity = { source, id };
  const [processed, attempt, deadLetters] = await Promise.all([
    processedRecord(db, identity),
    attemptRecord(db, identity),
    deadLettersOfEvent(db, identity),
  ]);
  if (processed === null && attempt === null && deadLetters.length === 0) return null;
  return { source, id, processed, attempt, deadLetters };
}

/** Counted afresh on every call: a running counter drifts from the tables it describes. */
export async function summary(db: Executor) {
  const [orders, outbox, deadLetters, openOrders] = await Promise.all([
    ordersByPortalStatus(db),
    mailCountsByState(db),
    unreplayedDeadLetters(db),
    openOrdersBySoldTo(db),
  ]);
  const outboxByState: Record<string, number> = { pending: 0, parked: 0, sent: 0 };
  for (const row of outbox) outboxByState[row.state] = row.count;
  return {
    ordersByPortalStatus: Object.fromEntries(orders.map((row) => [row.status, row.count])),
    outboxByState,
    deadLettersNotReplayed: deadLetters,
    /** From the view portal_open_orders: the sold-to parties with the most open orders, at most 100. */
    openOrdersBySoldToParty: openOrders,
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A dead letter with its body as text when it is UTF-8, else as base64. */
export async function readDeadLetter(db: Executor, id: string) {
  const row = await deadLetterForOperator(db, id);
  if (row === undefined) return null;
  const { body, ...rest } = row;
  try {
    return { ...rest, bodyEncoding: 'utf8', body: utf8.decode(body) };
  } catch {
    return { ...rest, bodyEncoding: 'base64', body: body.toString('base64') };
  }
}
