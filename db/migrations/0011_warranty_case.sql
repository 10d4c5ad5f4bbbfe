-- Warranty cases: one per customer return of a source system (the events' `source`), holding absolute values
-- from the newest S/4HANA state seen, upserted (never insert-only) in the effect's transaction. As for
-- portal_order_status, (s4_changed_at, s4_read_at) orders states: an older one never overwrites a newer one.
create table warranty_case (
  source_system text not null,
  customer_return text not null,
  case_status text not null
    check (case_status in ('Open', 'InProcess', 'Completed', 'Rejected', 'Withdrawn')),
  sold_to_party text,
  customer_reference text,
  -- The sales order the return refers to; null when it refers to another kind of document.
  sales_order text,
  -- The header's order reason and the items' return reasons, each once, sorted.
  return_reasons text[] not null default '{}',
  s4_changed_at timestamptz,
  s4_read_at timestamptz not null,
  updated_at timestamptz not null default now(),
  -- The notification ledger: the status the fleet manager was last told of (null: never), the one told before
  -- it, and the Message-ID of the case's first email, which later emails answer. An email goes out only when
  -- case_status differs from notified_case_status.
  notified_case_status text,
  previous_notified_case_status text,
  thread_message_id text,
  notified_at timestamptz,
  primary key (source_system, customer_return)
);
