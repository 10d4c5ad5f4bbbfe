-- The transaction that last moved a warranty case's notification ledger (set with notified_case_status when it
-- changes, and on the case's insert). The effect's statement compares it with its own transaction in RETURNING:
-- the decision to queue an email is then taken from the row version its upsert locked, as order_notification's
-- is, never from a snapshot that a concurrent first insert of the same case is missing from. Cases notified
-- before this column existed keep null, which no transaction matches: their emails are queued already.
alter table warranty_case add column notified_by_xact xid8;
