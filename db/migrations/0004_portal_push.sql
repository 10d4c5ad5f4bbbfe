-- The fleet portal's HTTP API is told each order's state through this outbox: one row per order, holding the
-- state to push (pending) or the state last pushed (done). The effect's transaction writes it when the portal's
-- state differs from this row's, so a newer state replaces a pending one, and replaces the state of a push in
-- flight (a new push_id): the sender sees the replacement when it books the answer and the order goes again.
-- A claimed row is leased (leased_until), not locked: no transaction stays open while the portal answers, and
-- the lease, not next_attempt_at, keeps a second instance off an order with a push in flight.
create table portal_push (
  sales_order text primary key,
  portal_status text not null,
  requested_delivery_date date,
  sold_to_party text,
  customer_reference text,
  s4_changed_at timestamptz,
  -- The Idempotency-Key: fixed when the state is queued, the same on every retry of that state.
  push_id uuid not null,
  state text not null default 'pending' check (state in ('pending', 'done', 'parked')),
  -- How the last push ended: 'pushed' (2xx) or 'conflict' (409/412: the portal holds a newer state).
  result text check (result in ('pushed', 'conflict')),
  -- Tries of this push_id, for the backoff; reset when a newer state is queued.
  attempts integer not null default 0,
  -- Claims of the row ever: identifies one claim's lease, so a claim that lost its lease books nothing.
  claims integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  leased_until timestamptz,
  last_error text,
  -- Since when the order has waited for a push; kept when a pending state is replaced by a newer one.
  pending_since timestamptz not null default now(),
  done_at timestamptz
);
create index portal_push_due on portal_push (next_attempt_at) where state = 'pending';
-- The backlog (/health, /metrics) and the admin list read rows not done only.
create index portal_push_open on portal_push (state, pending_since) where state <> 'done';

-- Open orders per sold-to party, counted from each order's state, never incremented: the portal's contract.
create view portal_open_orders as
  select sold_to_party, count(*)::int as open_orders
  from portal_order_status
  where portal_status not in ('Delivered', 'Rejected')
  group by sold_to_party;
-- The view's rows come from this index alone (an index-only scan grouped by sold-to party).
create index portal_order_status_open on portal_order_status (sold_to_party)
  where portal_status not in ('Delivered', 'Rejected');
