-- Customer-return events beside sales-order events. processed_event names the return an event named, as it
-- names the sales order, so that a return's events can be found; a return that is not a warranty case
-- (WARRANTY_RETURN_REASONS) is recorded with an outcome that says so.
alter table processed_event add column customer_return text;
create index processed_event_customer_return on processed_event (customer_return)
  where customer_return is not null;
alter table processed_event drop constraint processed_event_outcome_check;
alter table processed_event add constraint processed_event_outcome_check
  check (outcome in ('applied', 'stale', 'not_found', 'ignored', 'not_warranty_case'));
