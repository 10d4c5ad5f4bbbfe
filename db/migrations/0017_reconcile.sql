-- Reconciliation against S/4HANA (docs/reconciliation.md). One mark per S/4HANA system (its CloudEvents source)
-- and family: the newest LastChangeDateTime a completed delta window vouches for, in S/4HANA's own time, as the
-- 7-digit text S/4HANA writes (fixed width, so text order is time order). `checked_at` is this service's time of
-- the last run that completed: how long reconciliation has not covered the family, whatever S/4HANA changed.
create table reconcile_mark (
  source text not null,
  family text not null,
  mark text not null check (mark ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$'),
  checked_at timestamptz not null default now(),
  primary key (source, family)
);

-- Every run, for operators: what it read and repaired, and why it failed. window_from and window_to are S/4HANA
-- stamps: a delta reads from window_from and vouches for nothing beyond window_to (its start less the settle time);
-- a sweep or baseline reads every open document and leaves window_from empty.
create table reconcile_run (
  id bigint generated always as identity primary key,
  source text not null,
  family text not null,
  mode text not null check (mode in ('delta', 'sweep', 'baseline')),
  status text not null default 'running' check (status in ('running', 'done', 'failed')),
  window_from text,
  window_to text,
  pages integer not null default 0,
  rows_read integer not null default 0,
  repairs integer not null default 0,
  s4_requests integer not null default 0,
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  error_class text,
  error_text text
);

-- One running run per family of a system, whatever the instances: the advisory lock serializes them, this says so.
create unique index reconcile_run_running on reconcile_run (source, family) where status = 'running';
create index reconcile_run_latest on reconcile_run (started_at desc);
