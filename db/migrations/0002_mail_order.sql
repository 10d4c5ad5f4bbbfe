-- The claim takes, in (next_attempt_at, id) order, only emails that are the oldest pending one of their order.
-- Both indexes hold pending rows only: sent mail stays for the retention window and would otherwise be walked
-- past on every claim.
-- Due mail in claim order, id included: a claim of a few rows stops after them instead of sorting every due row.
drop index mail_outbox_due;
create index mail_outbox_due on mail_outbox (next_attempt_at, id) where state = 'pending';
-- "Is an older email of this order still pending?", asked for every candidate.
create index mail_outbox_pending_order on mail_outbox (sales_order, id) where state = 'pending';
