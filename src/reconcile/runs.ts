// The reconcile_run table: one row per run, counted page by page, ended done or failed.
import { deleteOldest } from '../db/deleteOldest.js';
import type { Executor } from '../db/transaction.js';
import type { ReconcileFamily } from './collection.js';
import type { Stamp } from './stamp.js';

export type RunMode = 'delta' | 'sweep' | 'baseline';

export interface RunRecord {
  id: string;
  source: string;
  family: ReconcileFamily;
  mode: RunMode;
  status: 'running' | 'done' | 'failed';
  windowFrom: Stamp | null;
  windowTo: Stamp | null;
  pages: number;
  rows: number;
  repairs: number;
  s4Requests: number;
  startedAt: Date;
  endedAt: Date | null;
  errorClass: string | null;
  errorText: string | null;
}

const COLUMNS = `id::text as "id", source, family, mode, status, window_from as "windowFrom", window_to as "windowTo",
  pages, rows_read as "rows", repairs, s4_requests as "s4Requests", started_at as "startedAt", ended_at as "endedAt",
  error_class as "errorClass", error_text as "errorText"`;

export async function insertRun(
  db: Executor,
  run: { source: string; family: ReconcileFamily; mode: RunMode; windowFrom: Stamp | null; windowTo: Stamp },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `insert into reconcile_run (source, family, mode, window_from, window_to)
     values ($1::text, $2::text, $3::text, $4::text, $5::text) returning id::text as "id"`,
    [run.source, run.family, run.mode, run.windowFrom, run.windowTo],
  );
  return (rows[0] as { id: string }).id;
}

/** Ends, as failed, the runs of the family still marked running: their instance stopped before they ended. */
export async function endInterrupted(db: Executor, source: string, family: ReconcileFamily): Promise<void> {
  await db.query(
    `update reconcile_run set status = 'failed', ended_at = now(), error_class = 'Interrupted',
       error_text = 'the run stopped before it ended: its instance stopped, or lost its database session'
     where source = $1::text and family = $2::text and status = 'running'`,
    [source, family],
  );
}

export async function countPage(
  db: Executor,
  id: string,
  page: { rows: number; repairs: number; requests: number },
): Promise<void> {
  await db.query(
    `update reconcile_run set pages = pages + 1, rows_read = rows_read + $2::int, repairs = repairs + $3::int,
       s4_requests = s4_requests + $4::int
     where id = $1::bigint`,
    [id, page.rows, page.repairs, page.requests],
  );
}

/** What a run did, as its row counts it: given when it ends, for its log line. */
export interface RunTotals {
  mode: RunMode;
  pages: number;
  rows: number;
  repairs: number;
  requests: number;
}

export async function endRun(
  db: Executor,
  id: string,
  failure?: { errorClass: string; errorText: string },
): Promise<RunTotals> {
  const { rows } = await db.query<RunTotals>(
    `update reconcile_run set status = $2::text, ended_at = now(), error_class = $3::text, error_text = $4::text
     where id = $1::bigint
     returning mode, pages, rows_read as "rows", repairs, s4_requests as "requests"`,
    [id, failure === undefined ? 'done' : 'failed', failure?.errorClass ?? null, failure?.errorText ?? null],
  );
  return rows[0] as RunTotals;
}

/** When the family's latest completed sweep or baseline started: the daily sweep is due a day after it. */
export async function lastSweep(
  db: Executor,
  source: string,
  family: ReconcileFamily,
): Promise<Date | undefined> {
  const { rows } = await db.query<{ startedAt: Date | null }>(
    `select max(started_at) as "startedAt" from reconcile_run
     where source = $1::text and family = $2::text and mode in ('sweep', 'baseline') and status = 'done'`,
    [source, family],
  );
  return rows[0]?.startedAt ?? undefined;
}

/** The latest runs, newest first. */
export async function latestRuns(db: Executor, limit: number): Promise<RunRecord[]> {
  const { rows } = await db.query<RunRecord>(
    `select ${COLUMNS} from reconcile_run order by started_at desc, id desc limit $1::int`,
    [limit],
  );
  return rows;
}

/**
 * Per family, seconds since the newest point reconciliation vouches for: the mark, or the window end of the
 * latest completed run when that is later. A quiet window moves no mark (nothing was read), yet vouches for it.
 */
export async function markLags(db: Executor, source: string): Promise<Array<[string, number]>> {
  const { rows } = await db.query<{ family: string; lag: number }>(
    `select f.family, extract(epoch from now() - greatest(m.mark, r.window_to)::timestamptz)::float8 as "lag"
     from (select family from reconcile_mark where source = $1::text
           union select family from reconcile_run where source = $1::text) f
     left join reconcile_mark m on m.source = $1::text and m.family = f.family
     left join lateral (select max(window_to) as window_to from reconcile_run
                        where source = $1::text and family = f.family and status = 'done') r on true
     where coalesce(m.mark, r.window_to) is not null`,
    [source],
  );
  return rows.map((row) => [row.family, Math.max(0, row.lag)]);
}

/** Per family, how many of its latest completed runs in a row had repairs. */
export async function repairingRuns(db: Executor, source: string): Promise<Array<[string, number]>> {
  const { rows } = await db.query<{ family: string; runs: number }>(
    `select f.family, count(r.id)::int as "runs"
     from (select distinct family from reconcile_run where source = $1::text) f
     left join lateral (select max(id) as id from reconcile_run
                        where source = $1::text and family = f.family and status = 'done' and repairs = 0) q on true
     left join reconcile_run r on r.source = $1::text and r.family = f.family and r.status = 'done'
       and r.repairs > 0 and r.id > coalesce(q.id, 0)
     group by f.family`,
    [source],
  );
  return rows.map((row) => [row.family, row.runs]);
}

/**
 * Retention's batch of runs that started before the cutoff (DEDUP_RETENTION_DAYS, as the records they found): a
 * record keeps its run's id when the run is gone. A run still going is kept.
 */
export const EXPIRED_RUNS = deleteOldest('reconcile_run', 'started_at', "status <> 'running' and ");
