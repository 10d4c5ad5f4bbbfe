-- What a return's timeline (GET /api/returns/{customerReturn}/timeline) needs beyond what 0010 and 0012 record.

-- The return an event named, beside the sales order, written by the statements that already write these rows: an
-- event released and not yet processed, or refused, shows on its return's timeline. As for sales_order, no index
-- on event_attempt, which holds only events not yet processed.
alter table event_attempt add column customer_return text;
alter table dead_letter add column customer_return text;
create index dead_letter_customer_return on dead_letter (customer_return) where customer_return is not null;

-- The case status a customer-return event's S/4HANA read saw, as read_portal_status holds an order's status.
alter table processed_event add column read_case_status text;
