// The benchmark's database, on a PostgreSQL server of its own (postgresServer.ts) started for one run and removed
// afterwards (its queue is a test queue, test/support/broker.ts). Nothing on the shared PostgreSQL is touched.
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { CREATE_PLAIN_TABLES, TRUNCATE_PLAIN_TABLES } from './plain/tables.js';
import { startPostgresServer } from './postgresServer.js';

const BENCH_APPLICATION = 'fon-bench';

export interface BenchDatabase {
  url: string;
  /** A small pool for the benchmark's own reads (progress, timestamps). */
  pool: pg.Pool;
  /** Empties every table either consumer writes, between phases, and settles the disk (`checkpoint`). */
  reset(): Promise<void>;
  drop(): Promise<void>;
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const database = await startPostgresServer();
  // Named, so that its own connections are told apart from the service's in pg_stat_activity.
  const pool = new pg.Pool({ connectionString: database.url, max: 2, application_name: BENCH_APPLICATION });
  // A session still closing when the database is dropped reports an error of its own: nothing to do then.
  pool.on('error', () => {});
  await migrate(pool);
  await pool.query(CREATE_PLAIN_TABLES);
  await pool.query('create extension if not exists pg_stat_statements');
  const checkpoint = async () => {
    await pool.query('checkpoint');
  };
  return {
    url: database.url,
    pool,
    async reset() {
      await pool.query(
        `truncate processed_event, event_attempt, portal_order_status, order_notification, mail_outbox, portal_push,
                 dead_letter, duplicate_arrival`,
      );
      await pool.query(TRUNCATE_PLAIN_TABLES);
      // No ANALYZE after it: an analyzed empty table is known to be empty, and the service's connections, which
      // prepare their statements on the first events, would keep plans that scan the whole table for a key (a
      // sequential scan of processed_event per identity check, costing more the fuller it gets) until
      // autovacuum analyzes it again. A truncated table counts as never analyzed, as in a new database: the
      // planner assumes a few pages and looks keys up in their index.
      await checkpoint();
    },
    async drop() {
      await pool.end();
      await database.stop();
    },
  };
}
