// The benchmark's own database on the local PostgreSQL, created for one run and dropped afterwards (its queue
// is a test queue, test/support/broker.ts). Nothing else on the shared services is touched.
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { createDatabase } from '../test/support/database.js';

const BENCH_APPLICATION = 'fon-bench';

export interface BenchDatabase {
  url: string;
  /** A small pool for the benchmark's own reads (progress, timestamps). */
  pool: pg.Pool;
  /** Process ids of the other sessions on this database: the service's backends while it runs. */
  backendPids(): Promise<number[]>;
  /** Empties every table the service writes, between scenarios, and settles the disk (`checkpoint`). */
  reset(): Promise<void>;
  /**
   * Empties the outboxes, so that the next phase does not send what the last one left queued, and settles the
   * disk (`checkpoint`).
   */
  emptyOutboxes(): Promise<void>;
  /**
   * Writes every page the phases before dirtied to disk now (CHECKPOINT), so that the next window does not share
   * the disk with a checkpoint spread over minutes in the background (PostgreSQL's default), whose writes slow
   * every commit's flush, on which one event in flight waits. It narrows the scatter of the database ceiling at
   * prefetch 1, it does not settle it: the machine's own pace still moves.
   */
  checkpoint(): Promise<void>;
  drop(): Promise<void>;
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const database = await createDatabase('fon_bench');
  // Named, so that its own connections are told apart from the service's in pg_stat_activity.
  const pool = new pg.Pool({ connectionString: database.url, max: 2, application_name: BENCH_APPLICATION });
  // A session still closing when the database is dropped reports an error of its own: nothing to do then.
  pool.on('error', () => {});
  await migrate(pool);
  const checkpoint = async () => {
    await pool.query('checkpoint');
  };
  return {
    url: database.url,
    pool,
    async backendPids() {
      const { rows } = await pool.query<{ pid: number }>(
        `select pid from pg_stat_activity
         where datname = current_database() and application_name is distinct from $1::text`,
        [BENCH_APPLICATION],
      );
      return rows.map((row) => row.pid);
    },
    async reset() {
      await pool.query(
        `truncate processed_event, event_attempt, portal_order_status, order_notification, mail_outbox, portal_push,
                 dead_letter`,
      );
      // No ANALYZE after it: an analyzed empty table is known to be empty, and the service's connections, which
      // prepare their statements on the first events, would keep plans that scan the whole table for a key (a
      // sequential scan of processed_event per identity check, costing more the fuller it gets) until
      // autovacuum analyzes it again. A truncated table counts as never analyzed, as in a new database: the
      // planner assumes a few pages and looks keys up in their index.
      await checkpoint();
    },
    async emptyOutboxes() {
      await pool.query('truncate mail_outbox, portal_push');
      await checkpoint();
    },
    checkpoint,
    async drop() {
      await pool.end();
      await database.drop();
    },
  };
}
