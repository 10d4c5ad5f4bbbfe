-- The shared tables name no family. A document is `family` (as events name it: salesOrder, customerReturn; null
-- for an event of no family) and `key` (what the event names in that family), and what only one family knows is
-- one jsonb its family writes, reads and validates: an outbox row's content, what an event's S/4HANA read saw.
-- Every row is carried over: the old columns become family, key and content, and then go.

-- Processed events: the document, and what the read saw as the family's timeline tells it. Timestamps are kept
-- as JavaScript writes them (UTC, milliseconds), dates as YYYY-MM-DD.
alter table processed_event add column family text, add column key text, add column read jsonb;
update processed_event set
  family = case when customer_return is not null then 'customerReturn'
                when sales_order is not null then 'salesOrder' end,
  key = coalesce(customer_return, sales_order),
  read = case
    when customer_return is not null and read_case_status is not null then jsonb_build_object(
      'caseStatus', read_case_status,
      'changedAt', to_char(read_changed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    when customer_return is null and read_portal_status is not null then jsonb_build_object(
      'portalStatus', read_portal_status,
      'requestedDeliveryDate', to_char(read_requested_delivery_date, 'YYYY-MM-DD'),
      'changedAt', to_char(read_changed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) end;
alter table processed_event
  drop column sales_order, drop column customer_return, drop column read_portal_status,
  drop column read_requested_delivery_date, drop column read_changed_at, drop column read_case_status;
create index processed_event_document on processed_event (family, key) where key is not null;

-- Deliveries not yet processed: no index, as before (the table holds only events not yet processed).
alter table event_attempt add column family text, add column key text;
update event_attempt set
  family = case when customer_return is not null then 'customerReturn'
                when sales_order is not null then 'salesOrder' end,
  key = coalesce(customer_return, sales_order);
alter table event_attempt drop column sales_order, drop column customer_return;

alter table dead_letter add column family text, add column key text;
update dead_letter set
  family = case when customer_return is not null then 'customerReturn'
                when sales_order is not null then 'salesOrder' end,
  key = coalesce(customer_return, sales_order);
alter table dead_letter drop column sales_order, drop column customer_return;
create index dead_letter_document on dead_letter (family, key) where key is not null;

-- Arrivals of duplicates name their document through their event's record (processed_event): unchanged.

-- Emails: the family that renders one, its key (one conversation: emails of one family and key go out in outbox
-- order), and what it says. `change` ('new', 'changed') and the delivery columns stay shared.
alter table mail_outbox add column family text, add column key text, add column content jsonb;
update mail_outbox set
  family = case kind when 'warranty_case' then 'customerReturn' else 'salesOrder' end,
  key = case kind when 'warranty_case' then customer_return else sales_order end,
  content = case kind
    when 'warranty_case' then jsonb_build_object(
      'caseStatus', case_status,
      'previousCaseStatus', previous_case_status,
      'salesOrder', case_sales_order,
      'returnReasons', to_jsonb(coalesce(return_reasons, '{}')),
      'soldToParty', sold_to_party,
      'customerReference', customer_reference)
    else jsonb_build_object(
      'portalStatus', portal_status,
      'requestedDeliveryDate', to_char(requested_delivery_date, 'YYYY-MM-DD'),
      'previousPortalStatus', previous_portal_status,
      'previousRequestedDeliveryDate', to_char(previous_requested_delivery_date, 'YYYY-MM-DD'),
      'soldToParty', sold_to_party,
      'customerReference', customer_reference) end;
alter table mail_outbox
  alter column family set not null, alter column key set not null, alter column content set not null,
  add constraint mail_outbox_content check (jsonb_typeof(content) = 'object');
drop index mail_outbox_pending_order;
drop index mail_outbox_sales_order;
drop index mail_outbox_customer_return;
alter table mail_outbox
  drop column conversation, drop column kind, drop column sales_order, drop column portal_status,
  drop column requested_delivery_date, drop column sold_to_party, drop column customer_reference,
  drop column customer_return, drop column case_status, drop column previous_case_status,
  drop column case_sales_order, drop column return_reasons, drop column previous_portal_status,
  drop column previous_requested_delivery_date;
create index mail_outbox_pending_order on mail_outbox (family, key, id) where state = 'pending';
create index mail_outbox_document on mail_outbox (family, key);

-- Portal pushes: one row per document, its content the body of the PUT (the portal's contract), and
-- pushed_content the body last booked done (with pushed_claim, the claim that booked it), for the family's
-- effect to compare a change back with. Rows from before carry what the portal was known to hold without the
-- s4ChangedAt it was pushed with, which no comparison reads.
alter table portal_push
  add column family text, add column key text, add column content jsonb, add column pushed_content jsonb;
update portal_push set
  family = case kind when 'warranty_case' then 'customerReturn' else 'salesOrder' end,
  key = case kind when 'warranty_case' then customer_return else sales_order end,
  content = case kind
    when 'warranty_case' then jsonb_build_object(
      'customerReturn', customer_return,
      'caseStatus', case_status,
      'soldToParty', sold_to_party,
      'customerReference', customer_reference,
      'salesOrder', case_sales_order,
      'returnReasons', to_jsonb(coalesce(return_reasons, '{}')),
      's4ChangedAt', to_char(s4_changed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    else jsonb_build_object(
      'salesOrder', sales_order,
      'portalStatus', portal_status,
      'requestedDeliveryDate', to_char(requested_delivery_date, 'YYYY-MM-DD'),
      'soldToParty', sold_to_party,
      'customerReference', customer_reference,
      's4ChangedAt', to_char(s4_changed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) end,
  pushed_content = case when kind = 'order' and pushed_claim is not null then jsonb_build_object(
      'salesOrder', sales_order,
      'portalStatus', pushed_portal_status,
      'requestedDeliveryDate', to_char(pushed_requested_delivery_date, 'YYYY-MM-DD'),
      'soldToParty', pushed_sold_to_party,
      'customerReference', pushed_customer_reference) end;
alter table portal_push
  alter column family set not null, alter column key set not null, alter column content set not null,
  add constraint portal_push_content check (jsonb_typeof(content) = 'object');
alter table portal_push drop constraint portal_push_pkey;
alter table portal_push
  drop column resource, drop column kind, drop column sales_order, drop column portal_status,
  drop column requested_delivery_date, drop column sold_to_party, drop column customer_reference,
  drop column s4_changed_at, drop column customer_return, drop column case_status, drop column case_sales_order,
  drop column return_reasons, drop column pushed_portal_status, drop column pushed_requested_delivery_date,
  drop column pushed_sold_to_party, drop column pushed_customer_reference;
alter table portal_push add primary key (family, key);
