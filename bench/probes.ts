// What the benchmark reads while the service runs: commit times and outcomes from the database, the CPU of the
// service's database sessions, and the service's own Prometheus histograms.
import type { BenchDatabase } from './infrastructure.js';
import { cpuSeconds } from './processStats.js';

/** Commit time (ms since the epoch) of each listed event that is processed. */
export async function commitTimes(db: BenchDatabase, ids: string[]): Promise<Map<string, number>> {
  const { rows } = await db.pool.query<{ id: string; ms: number }>(
    `select id, extract(epoch from processed_at)::float8 * 1000 as "ms"
     from processed_event where id = any($1::text[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.ms]));
}

export async function processedCount(db: BenchDatabase): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('select count(*)::int as "n" from processed_event');
  return rows[0]?.n ?? 0;
}

export async function outcomes(
  db: BenchDatabase,
): Promise<{ outcomes: Record<string, number>; deadLetters: number }> {
  const [byOutcome, letters] = await Promise.all([
    db.pool.query<{ outcome: string; n: number }>(
      `select outcome, count(*)::int as "n" from processed_event group by outcome order by outcome`,
    ),
    db.pool.query<{ n: number }>('select count(*)::int as "n" from dead_letter'),
  ]);
  return {
    outcomes: Object.fromEntries(byOutcome.rows.map((row) => [row.outcome, row.n])),
    deadLetters: letters.rows[0]?.n ?? 0,
  };
}

/** CPU seconds used so far by the service's database sessions (they live as long as its pool keeps them). */
export async function databaseCpu(db: BenchDatabase): Promise<number> {
  let total = 0;
  for (const pid of await db.backendPids()) {
    try {
      total += cpuSeconds(pid);
    } catch {
      // the session ended meanwhile
    }
  }
  return total;
}

/** The mean of a Prometheus histogram over all its label sets, in ms. */
export function histogramMeanMs(metrics: string, name: string): number {
  let sum = 0;
  let count = 0;
  for (const line of metrics.split('\n')) {
    const [series, value] = line.split(' ');
    if (series?.startsWith(`${name}_sum`)) sum += Number(value);
    if (series?.startsWith(`${name}_count`)) count += Number(value);
  }
  return count === 0 ? Number.NaN : (sum / count) * 1000;
}

/** The value of an unlabelled Prometheus gauge; NaN when absent. */
export function gaugeValue(metrics: string, name: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

/** Transactions committed in this database so far (pg_stat_database; updated when a session reports, ~0.5 s). */
export async function commitsSoFar(db: BenchDatabase): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `select xact_commit::float8 as "n" from pg_stat_database where datname = current_database()`,
  );
  return rows[0]?.n ?? 0;
}
