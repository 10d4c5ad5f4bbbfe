-- Which reconciliation run found a reconciled document (docs/reconciliation.md): the timeline names the run and
-- its window. Null for events. The delivery count carries it from the identity check to the record, as it carries
-- the channel. No foreign key: retention deletes runs and records independently.
alter table processed_event add column reconcile_run bigint;
alter table event_attempt add column reconcile_run bigint;
