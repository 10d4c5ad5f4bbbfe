-- What the portal is known to hold of each order: the four values it shows of the state last booked done (2xx,
-- or 409/412), and the claim that booked it. The effect compares a new state with these, not only with the
-- state last queued: a pending state that was never tried since (claims still equal to pushed_claim) and that
-- S/4HANA has changed back to the state last pushed is withdrawn, since the portal already holds that state.
-- Once a later claim was made (a push tried, perhaps timed out, or in flight) the portal may hold that state
-- instead, so a change back is pushed.
alter table portal_push
  add column pushed_portal_status text,
  add column pushed_requested_delivery_date date,
  add column pushed_sold_to_party text,
  add column pushed_customer_reference text,
  add column pushed_claim integer;
-- A done row is the state last pushed. A pending or parked row no longer says what was pushed before it:
-- it stays unknown (pushed_claim null), so its order is pushed whatever comes next, as before.
update portal_push
  set pushed_portal_status = portal_status,
      pushed_requested_delivery_date = requested_delivery_date,
      pushed_sold_to_party = sold_to_party,
      pushed_customer_reference = customer_reference,
      pushed_claim = claims
  where state = 'done';
-- 'withdrawn': a state queued and then withdrawn unsent, because S/4HANA changed back to the state last pushed.
alter table portal_push drop constraint portal_push_result_check;
alter table portal_push add constraint portal_push_result_check check (result in ('pushed', 'conflict', 'withdrawn'));
