-- Whether the row opened a warranty case. A Deleted event of a return no case exists for writes a tombstone
-- (opened false, Withdrawn, no details, an empty ledger): its insert takes the case's key, so a Created or Changed
-- read before the deletion and written after it is stale, and a case insert still uncommitted when the Deleted's
-- statement runs makes that statement wait and then withdraw the case. A tombstone is no case: no email, no push,
-- never listed or counted as one. Every row before this column is a case.
alter table warranty_case add column opened boolean not null default true;

-- Retention removes tombstones after DEDUP_RETENTION_DAYS, oldest first: only a late event's statement needs one.
create index warranty_case_tombstone_age on warranty_case (updated_at) where not opened;
