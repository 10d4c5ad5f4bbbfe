// What reconciliation must leave behind in a crash run: every change S/4HANA published no event for repaired by a
// run, every run ended (done, or failed and followed by a run that completed), and no mark ahead of S/4HANA's
// newest stamp. Like the other checks, each returns findings instead of throwing.
import type pg from 'pg';

export type Family = 'salesOrder' | 'customerReturn';

/** A change S/4HANA took on without publishing its event, with the stamp it wrote. */
export interface DroppedChange {
  family: Family;
  key: string;
  /** The 7-digit LastChangeDateTime text (src/reconcile/stamp.ts). */
  stamp: string;
}

export interface RunRow {
  id: number;
  family: string;
  mode: string;
  status: string;
  startedAt: Date;
  endedAt: Date | null;
  errorText: string | null;
}

export interface MarkRow {
  family: string;
  mark: string;
}

/** The identity a reconciled document is recorded under (docs/reconciliation.md). */
export function reconcileId(change: DroppedChange): string {
  return `${change.family}:${change.key}:${change.stamp}`;
}

/** Each dropped change was recorded as processed by a reconciliation run, under its own stamp. */
export function checkRepairs(dropped: DroppedChange[], reconciled: Set<string>): string[] {
  return dropped
    .filter((change) => !reconciled.has(reconcileId(change)))
    .map(
      (change) =>
        `${change.family} ${change.key}: its change of ${change.stamp} had no event and no run repaired it`,
    );
}

/**
 * Every run ended: a `failed` one (an error, or interrupted by a kill) was followed by a run of its family that
 * started later and completed, unless it ended as the fleet was stopping. None is still `running`, except one whose
 * instance may have been killed during it (a kill after its start) when no run of its family started after that
 * kill: the next run marks such a run interrupted, and none came before the fleet stopped. The first run of each
 * family is its baseline.
 */
export function checkRuns(runs: RunRow[], stoppingAt: number, killedAt: readonly number[] = []): string[] {
  const findings: string[] = [];
  const ordered = [...runs].sort((a, b) => a.id - b.id);
  const families = new Set(ordered.map((run) => run.family));
  for (const family of families) {
    const first = ordered.find((run) => run.family === family);
    if (first !== undefined && first.mode !== 'baseline')
      findings.push(`the first ${family} run (${first.id}) was a ${first.mode}, not a baseline`);
  }
  for (const run of ordered) {
    const what = `${run.family} ${run.mode} run ${run.id}`;
    if (run.status === 'running') {
      const started = run.startedAt.getTime();
      const unnoticed = killedAt.some(
        (kill) =>
          kill >= started &&
          !ordered.some((later) => later.family === run.family && later.startedAt.getTime() > kill),
      );
      if (!unnoticed) findings.push(`${what} is still running after the fleet stopped`);
      continue;
    }
    if (run.status === 'done') continue;
    if (run.status !== 'failed') {
      findings.push(`${what} ended ${run.status}`);
      continue;
    }
    if (run.endedAt !== null && run.endedAt.getTime() >= stoppingAt) continue;
    const resumed = ordered.some(
      (later) => later.family === run.family && later.id > run.id && later.status === 'done',
    );
    if (!resumed) findings.push(`${what} failed (${run.errorText ?? 'no error'}) and no later run completed`);
  }
  return findings;
}

/** Each family's mark is at most the newest stamp S/4HANA wrote for any of its documents. */
export function checkMarks(marks: MarkRow[], newest: Map<string, string>): string[] {
  const findings: string[] = [];
  for (const { family, mark } of marks) {
    const stamp = newest.get(family);
    if (stamp === undefined)
      findings.push(`${family} has the mark ${mark} but S/4HANA has no document of it`);
    else if (mark > stamp)
      findings.push(`${family}'s mark ${mark} is ahead of S/4HANA's newest stamp ${stamp}`);
  }
  return findings;
}

export async function reconciledIds(pool: pg.Pool, source: string): Promise<Set<string>> {
  const { rows } = await pool.query<{ id: string }>(
    `select id from processed_event where channel = 'reconcile' and source = $1`,
    [`${source}/reconcile`],
  );
  return new Set(rows.map((row) => row.id));
}

export async function reconcileRuns(pool: pg.Pool, source: string): Promise<RunRow[]> {
  const { rows } = await pool.query<RunRow>(
    `select id::int as "id", family, mode, status, started_at as "startedAt", ended_at as "endedAt",
            error_text as "errorText"
     from reconcile_run where source = $1 order by id`,
    [source],
  );
  return rows;
}

export async function reconcileMarks(pool: pg.Pool, source: string): Promise<MarkRow[]> {
  const { rows } = await pool.query<MarkRow>(
    'select family, mark from reconcile_mark where source = $1 order by family',
    [source],
  );
  return rows;
}
