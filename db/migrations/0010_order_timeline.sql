-- What an order's timeline (GET /api/orders/{salesOrder}/timeline) tells beyond what the tables held before.

-- Per processed event, written by the statement that records it: how it came (the channel of the delivery that
-- processed it, its first delivery, how many deliveries it took and the last one's transient error, all taken
-- from its event_attempt row as that statement deletes it), what the S/4HANA read saw, and whether that was a
-- change to notify ('new' or 'changed') or the pair already notified ('unchanged'). Null for records made
-- before this migration, and the read and decision null for events without an effect (not found, ignored).
alter table processed_event
  add column channel text,
  add column received_at timestamptz,
  add column attempts integer,
  add column last_error text,
  add column read_portal_status text,
  add column read_requested_delivery_date date,
  add column read_changed_at timestamptz,
  add column notification text check (notification in ('new', 'changed', 'unchanged'));

-- The channel of the delivery counted last, handed on to processed_event, and the order the event names, so
-- that an event released and not yet processed shows on its order's timeline. No index on it: every new event
-- writes this table, and it holds only events not yet processed, which a timeline scans.
alter table event_attempt add column channel text, add column sales_order text;

-- One row per arrival of an event already processed with the same payload, written by the identity check's
-- statement. Kept as long as processed events (DEDUP_RETENTION_DAYS), by the same retention pass.
create table duplicate_arrival (
  source text not null,
  id text not null,
  channel text not null,
  arrived_at timestamptz not null default now()
);
create index duplicate_arrival_event on duplicate_arrival (source, id);
create index duplicate_arrival_arrived_at on duplicate_arrival (arrived_at);

-- The order a refused event named, when it parsed that far: its dead letters appear on the order's timeline.
alter table dead_letter add column sales_order text;
create index dead_letter_sales_order on dead_letter (sales_order) where sales_order is not null;

-- When an operator last put an email or a portal push back in line, and the state and error it had then (the
-- retry clears the error, and the timeline still tells why it was parked).
alter table mail_outbox
  add column retried_at timestamptz,
  add column retried_state text,
  add column retried_error text;
alter table portal_push
  add column retried_at timestamptz,
  add column retried_state text,
  add column retried_error text;
