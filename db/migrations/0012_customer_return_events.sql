-- Customer-return events beside sales-order events. processed_event names the return an event named, as it
-- names the sales order, so that a return's events can be found; a return that is not a warranty case
-- (WARRANTY_RETURN_REASONS) is recorded with an outcome that says so.
alter table processed_event add column customer_return text;
create index processed_event_customer_return on processed_event (customer_return)
  where customer_return is not null;
alter table processed_event drop constraint processed_event_outcome_check;
alter table processed_event add constraint processed_event_outcome_check
  check (outcome in ('applied', 'stale', 'not_found', 'ignored', 'not_warranty_case'));

-- The mail outbox carries a warranty case's emails beside the orders': `kind` says which, so that the sender
-- renders the right one. A case's email holds the case's status, the status told before, the sales order the
-- return refers to and its reasons; the sales-order columns stay null on it.
alter table mail_outbox
  add column kind text not null default 'order' check (kind in ('order', 'warranty_case')),
  add column customer_return text,
  add column case_status text,
  add column previous_case_status text,
  add column case_sales_order text,
  add column return_reasons text[],
  alter column sales_order drop not null,
  alter column portal_status drop not null,
  add constraint mail_outbox_kind_fields check (case kind
    when 'order' then sales_order is not null and portal_status is not null
    else customer_return is not null and case_status is not null end);
-- Emails of one conversation (an order, or a case) go out in outbox order: the claim orders by this key.
alter table mail_outbox
  add column conversation text not null generated always as
    (coalesce('return:' || customer_return, sales_order)) stored;
drop index mail_outbox_pending_order;
create index mail_outbox_pending_order on mail_outbox (conversation, id) where state = 'pending';
create index mail_outbox_customer_return on mail_outbox (customer_return) where customer_return is not null;

-- The push outbox carries a warranty case's state beside the orders' (PUT /warranty-cases/<customerReturn>),
-- one row per case as per order. `resource` names the row whatever its kind, and the claim, lease and booking
-- go by it; an order's row is still found by its sales order, a case's by its customer return.
alter table portal_push
  add column kind text not null default 'order' check (kind in ('order', 'warranty_case')),
  add column customer_return text unique,
  add column case_status text,
  add column case_sales_order text,
  add column return_reasons text[],
  alter column portal_status drop not null,
  add constraint portal_push_kind_fields check (case kind
    when 'order' then sales_order is not null and portal_status is not null
    else customer_return is not null and case_status is not null end);
alter table portal_push drop constraint portal_push_pkey;
alter table portal_push alter column sales_order drop not null, add constraint portal_push_sales_order unique (sales_order);
alter table portal_push
  add column resource text generated always as
    (coalesce('warranty-cases/' || customer_return, 'orders/' || sales_order)) stored,
  add primary key (resource);
