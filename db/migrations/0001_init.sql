-- Events whose effect is committed. The key is the CloudEvent identity; a second insert of the same
-- identity means another instance (or an earlier delivery) already applied it.
create table processed_event (
  source text not null,
  id text not null,
  type text not null,
  sales_order text,
  outcome text not null check (outcome in ('applied', 'stale', 'not_found', 'ignored')),
  payload_hash text not null,
  processed_at timestamptz not null default now(),
  primary key (source, id)
);
create index processed_event_processed_at on processed_event (processed_at);
create index processed_event_sales_order on processed_event (sales_order) where sales_order is not null;

-- Deliveries of events not yet processed, counted outside the main transaction so that a message which
-- crashes the process every time is still counted, and dead-lettered once it reaches the limit.
create table event_attempt (
  source text not null,
  id text not null,
  attempts integer not null default 1,
  last_error text,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  primary key (source, id)
);
create index event_attempt_last_seen_at on event_attempt (last_seen_at);

-- What the fleet portal reads: absolute values from the newest S/4HANA state seen.
-- (s4_changed_at, s4_read_at) orders states: an older one never overwrites a newer one.
create table portal_order_status (
  sales_order text primary key,
  portal_status text not null,
  requested_delivery_date date,
  sold_to_party text,
  customer_reference text,
  s4_changed_at timestamptz,
  s4_read_at timestamptz not null,
  updated_at timestamptz not null default now()
);

-- The (status, delivery date) pair the fleet manager was last told about, per order.
create table order_notification (
  sales_order text primary key,
  portal_status text not null,
  requested_delivery_date date,
  notified_at timestamptz not null default now()
);

-- Recipients per sold-to party; orders of other customers go to MAIL_TO.
create table mail_recipient (
  sold_to_party text primary key,
  recipients text[] not null check (cardinality(recipients) > 0)
);

-- Emails to send after commit. The Message-ID is fixed here, so a resend after a crash reuses it.
create table mail_outbox (
  id bigint generated always as identity primary key,
  sales_order text not null,
  portal_status text not null,
  requested_delivery_date date,
  sold_to_party text,
  customer_reference text,
  recipients text[] not null,
  message_id text not null unique,
  state text not null default 'pending' check (state in ('pending', 'sent', 'parked')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text,
  created_at timestamptz not null default now(),
  sent_at timestamptz
);
create index mail_outbox_due on mail_outbox (next_attempt_at) where state = 'pending';
-- The backlog (/health, /metrics) reads unsent rows only, not the sent ones kept for the retention window.
create index mail_outbox_unsent on mail_outbox (state, created_at) where state <> 'sent';
create index mail_outbox_sales_order on mail_outbox (sales_order);

-- Messages refused for good, with the reason. AMQP messages also go to the broker's dead-letter queue;
-- this row is where the reason is kept, since the broker's copy does not carry it.
create table dead_letter (
  id bigint generated always as identity primary key,
  channel text not null check (channel in ('amqp', 'webhook')),
  reason text not null,
  source text,
  event_id text,
  content_type text,
  -- CloudEvents binary-mode attributes (prefix removed): with body and content type, enough to replay.
  attributes jsonb not null default '{}',
  -- Transport metadata as received (AMQP properties, HTTP headers), for diagnosis.
  headers jsonb not null default '{}',
  body bytea not null,
  received_at timestamptz not null default now(),
  replayed_at timestamptz
);
create index dead_letter_received_at on dead_letter (received_at);
