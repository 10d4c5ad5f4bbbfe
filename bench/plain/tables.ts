// The plain consumer's tables and statements (consumer.ts): the same records as the service's, one plain table
// each. Kept apart from the consumer's process code, so that the bench's database setup can create them.

/** An outbox row as the consumer sends it (MAIL_COLUMNS). */
export interface QueuedMail {
  id: string;
  salesOrder: string;
  portalStatus: string;
  requestedDeliveryDate: string | null;
  soldToParty: string | null;
  customerReference: string | null;
  recipients: string[];
  messageId: string;
  previousPortalStatus: string | null;
  previousRequestedDeliveryDate: string | null;
  inReplyTo: string | null;
}

export const CREATE_PLAIN_TABLES = `
create table if not exists plain_processed_event (
  source text not null,
  id text not null,
  processed_at timestamptz not null default now(),
  primary key (source, id)
);
create table if not exists plain_event_attempt (
  source text not null,
  id text not null,
  attempts integer not null default 1,
  primary key (source, id)
);
create table if not exists plain_portal_status (
  sales_order text primary key,
  portal_status text not null,
  requested_delivery_date date,
  sold_to_party text,
  customer_reference text,
  s4_changed_at timestamptz
);
create table if not exists plain_order_notification (
  sales_order text primary key,
  portal_status text not null,
  requested_delivery_date date,
  previous_portal_status text,
  previous_requested_delivery_date date,
  thread_message_id text not null
);
create table if not exists plain_mail_outbox (
  id bigint generated always as identity primary key,
  sales_order text not null,
  portal_status text not null,
  requested_delivery_date date,
  sold_to_party text,
  customer_reference text,
  recipients text[] not null,
  message_id text not null unique,
  previous_portal_status text,
  previous_requested_delivery_date date,
  in_reply_to text,
  sent_at timestamptz
)`;

export const TRUNCATE_PLAIN_TABLES = `truncate plain_processed_event, plain_event_attempt, plain_portal_status,
  plain_order_notification, plain_mail_outbox`;

/**
 * Counts this delivery unless the event is processed, in one auto-committed statement before any work, so that a
 * message that kills the process is still counted and refused at the limit.
 */
export const CHECK_IDENTITY = `with seen as (
    select from plain_processed_event where source = $1::text and id = $2::text
  ), counted as (
    insert into plain_event_attempt as a (source, id) select $1::text, $2::text where not exists (select from seen)
    on conflict (source, id) do update set attempts = a.attempts + 1
    returning attempts
  )
  select exists (select from seen) as "processed", coalesce((select attempts from counted), 0) as "attempts"`;

/** No row when another delivery of the event committed first: that one did the work. */
export const RECORD_EVENT = `insert into plain_processed_event (source, id) values ($1::text, $2::text)
  on conflict do nothing returning id`;

export const FORGET_ATTEMPTS = 'delete from plain_event_attempt where source = $1::text and id = $2::text';

/** A row unless the stored state is newer (S/4HANA's change time): a late read never overwrites a newer one. */
export const UPSERT_STATUS = `insert into plain_portal_status as current
    (sales_order, portal_status, requested_delivery_date, sold_to_party, customer_reference, s4_changed_at)
  values ($1::text, $2::text, $3::date, $4::text, $5::text, $6::timestamptz)
  on conflict (sales_order) do update set portal_status = excluded.portal_status,
    requested_delivery_date = excluded.requested_delivery_date, sold_to_party = excluded.sold_to_party,
    customer_reference = excluded.customer_reference, s4_changed_at = excluded.s4_changed_at
  where coalesce(excluded.s4_changed_at, '-infinity') >= coalesce(current.s4_changed_at, '-infinity')
  returning sales_order`;

/** The pair last notified: a row only when the (status, date) pair is new, with the pair it replaces. */
export const NOTE_CHANGE = `insert into plain_order_notification as last
    (sales_order, portal_status, requested_delivery_date, thread_message_id)
  values ($1::text, $2::text, $3::date, $4::text)
  on conflict (sales_order) do update set portal_status = excluded.portal_status,
    requested_delivery_date = excluded.requested_delivery_date, previous_portal_status = last.portal_status,
    previous_requested_delivery_date = last.requested_delivery_date
  where (last.portal_status, last.requested_delivery_date)
    is distinct from (excluded.portal_status, excluded.requested_delivery_date)
  returning previous_portal_status as "previousPortalStatus",
    previous_requested_delivery_date::text as "previousRequestedDeliveryDate",
    nullif(thread_message_id, $4::text) as "inReplyTo"`;

const MAIL_COLUMNS = `id::text as "id", sales_order as "salesOrder", portal_status as "portalStatus",
  requested_delivery_date::text as "requestedDeliveryDate", sold_to_party as "soldToParty",
  customer_reference as "customerReference", recipients, message_id as "messageId",
  previous_portal_status as "previousPortalStatus",
  previous_requested_delivery_date::text as "previousRequestedDeliveryDate", in_reply_to as "inReplyTo"`;

export const QUEUE_MAIL = `insert into plain_mail_outbox (sales_order, portal_status, requested_delivery_date,
    sold_to_party, customer_reference, recipients, message_id, previous_portal_status,
    previous_requested_delivery_date, in_reply_to)
  values ($1::text, $2::text, $3::date, $4::text, $5::text, $6::text[], $7::text, $8::text, $9::date, $10::text)
  returning ${MAIL_COLUMNS}`;

/** Emails a stopped process queued and did not send: sent at start. */
export const UNSENT_MAILS = `select ${MAIL_COLUMNS} from plain_mail_outbox where sent_at is null order by id`;

export const MARK_SENT = 'update plain_mail_outbox set sent_at = now() where id = $1::bigint';
