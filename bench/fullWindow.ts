// A full retention window in the service's tables, for the benchmark's full-window drain (run.ts): what an
// instance holds after a week at its rate, so that the drain pays for tables of that size. Every statement that
// writes the window is here, against the tables as they are now: a change of their columns changes this file
// alone. Written set-wise (generate_series), not row by row, and analyzed afterwards.
import type pg from 'pg';

export interface WindowSize {
  /** Processed events, each with its delivery count, spread over the dedup window (DEDUP_RETENTION_DAYS, 7). */
  processedEvents: number;
  /** Sent emails, spread over the mail window (MAIL_RETENTION_DAYS, 30). */
  sentMails: number;
  /** Orders the events and emails are about: each has its portal row, push row and notified pair. */
  orders: number;
}

export const FULL_WINDOW: WindowSize = {
  processedEvents: 5_000_000,
  sentMails: 1_000_000,
  orders: 1_000_000,
};

/** The seeded rows' source and orders: apart from the bench's own (workload.ts numbers orders from 1,000,000). */
export const SEEDED_SOURCE = '/default/sap.s4.beh/full-window';
export const FIRST_SEEDED_ORDER = 20_000_000;

// Into empty tables. $1 count, $2 orders, $3 first order, $4 source. Ages stay inside the windows: nothing is due
// for deletion while the drain runs.
// A timestamp as the families write it into jsonb (src/db/content.ts).
const json = (sql: string) => `to_char((${sql}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const EVENTS = `insert into processed_event (source, id, type, family, key, outcome, payload_hash, processed_at,
    channel, received_at, attempts, read, notification)
  select $4::text, gen_random_uuid()::text, 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1', 'salesOrder',
    ($3::int + g % $2::int)::text, 'applied', md5(g::text) || md5((-g)::text), at, 'amqp', at, 1,
    jsonb_build_object('portalStatus', 'InProcess',
      'requestedDeliveryDate', to_char(at + interval '14 days', 'YYYY-MM-DD'),
      'changedAt', ${json("at - interval '1 second'")}),
    case when g % 5 = 0 then 'changed' else 'unchanged' end
  from generate_series(1, $1::int) g, lateral (select now() - interval '6 days 23 hours' * g / $1::int as at) t`;

const MAILS = `insert into mail_outbox (family, key, content, recipients, message_id, state, attempts,
    next_attempt_at, created_at, sent_at, change)
  select 'salesOrder', ($3::int + g % $2::int)::text,
    jsonb_build_object('portalStatus', 'InProcess',
      'requestedDeliveryDate', to_char(at + interval '14 days', 'YYYY-MM-DD'), 'soldToParty', '17100001',
      'customerReference', 'PO-' || g, 'previousPortalStatus', 'Open',
      'previousRequestedDeliveryDate', to_char(at + interval '13 days', 'YYYY-MM-DD')),
    array['fleet-manager@fleet.example'], '<' || gen_random_uuid() || '@full-window>', 'sent', 1, at, at, at,
    'changed'
  from generate_series(1, $1::int) g, lateral (select now() - interval '29 days 23 hours' * g / $1::int as at) t`;

const PORTAL_ROWS = `insert into portal_order_status (sales_order, portal_status, requested_delivery_date,
    sold_to_party, customer_reference, s4_changed_at, s4_read_at, updated_at)
  select ($1::int + g)::text, 'InProcess', current_date + 14, '17100001', 'PO-' || g, now() - interval '1 day',
    now() - interval '1 day', now() - interval '1 day'
  from generate_series(0, $2::int - 1) g`;

const NOTIFIED = `insert into order_notification (sales_order, portal_status, requested_delivery_date, notified_at,
    previous_portal_status, previous_requested_delivery_date, thread_message_id)
  select sales_order, portal_status, requested_delivery_date, updated_at, 'Open', requested_delivery_date - 1,
    '<' || gen_random_uuid() || '@full-window>'
  from portal_order_status`;

// The order's body, as the sales-order family's effect queues it (src/families/salesOrder/effectPush.ts), pushed.
const PUSHED = `insert into portal_push (family, key, content, push_id, state, result, attempts, claims,
    next_attempt_at, pending_since, done_at, pushed_content)
  select 'salesOrder', sales_order, body, gen_random_uuid(), 'done', 'pushed', 1, 1, updated_at, updated_at,
    updated_at, body
  from portal_order_status, lateral (select jsonb_build_object('salesOrder', sales_order,
    'portalStatus', portal_status, 'requestedDeliveryDate', to_char(requested_delivery_date, 'YYYY-MM-DD'),
    'soldToParty', sold_to_party, 'customerReference', customer_reference,
    's4ChangedAt', ${json('s4_changed_at')}) as body) b`;

/** Fills the window into empty tables and analyzes them, as autovacuum would have after a week. */
export async function seedFullWindow(pool: pg.Pool, size: WindowSize = FULL_WINDOW): Promise<void> {
  const first = FIRST_SEEDED_ORDER;
  await pool.query(EVENTS, [size.processedEvents, size.orders, first, SEEDED_SOURCE]);
  await pool.query(MAILS, [size.sentMails, size.orders, first]);
  await pool.query(PORTAL_ROWS, [first, size.orders]);
  await pool.query(NOTIFIED);
  await pool.query(PUSHED);
  await pool.query(
    'vacuum analyze processed_event, mail_outbox, portal_order_status, order_notification, portal_push',
  );
}

/**
 * Removes what a drain on the full window added (rows processed since `at`, emails after `mailId`, the drain's own
 * orders and delivery records), so that the next drain starts from the same window.
 */
export async function removeDrainRows(pool: pg.Pool, since: { at: Date; mailId: number }): Promise<void> {
  await pool.query('delete from processed_event where processed_at >= $1::timestamptz', [since.at]);
  await pool.query('delete from mail_outbox where id > $1::bigint', [since.mailId]);
  for (const table of ['portal_order_status', 'order_notification']) {
    await pool.query(`delete from ${table} where sales_order::bigint < $1::bigint`, [FIRST_SEEDED_ORDER]);
  }
  await pool.query(`delete from portal_push where family = 'salesOrder' and key::bigint < $1::bigint`, [
    FIRST_SEEDED_ORDER,
  ]);
  await pool.query('truncate event_attempt, duplicate_arrival, dead_letter');
  await pool.query(
    'vacuum analyze processed_event, mail_outbox, portal_order_status, order_notification, portal_push',
  );
}
