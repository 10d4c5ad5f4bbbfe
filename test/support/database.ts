import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { POSTGRES_URL } from './services.js';

export interface TestDatabase {
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

export interface Database {
  name: string;
  url: string;
  /** Drops it, whoever is still connected. */
  drop(): Promise<void>;
}

/** A new, empty database on the local PostgreSQL, or a copy of `template`. */
export async function createDatabase(prefix: string, template?: string): Promise<Database> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name}${template === undefined ? '' : ` template ${template}`}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      // A pool's end() resolves before its backends have gone; forcing the drop then terminates sessions whose
      // clients are still closing, and pg reports that as an error event nobody listens to any more. So wait
      // (briefly) for them to leave, and force only what is really still connected.
      for (let tries = 0; tries < 40; tries++) {
        const { rows } = await client.query<{ n: number }>(
          'select count(*)::int as n from pg_stat_activity where datname = $1::text',
          [name],
        );
        if (rows[0]?.n === 0) break;
        await sleep(50);
      }
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** A fresh, migrated database of its own (cloned from the run's template), dropped by drop(). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = process.env.TEST_TEMPLATE_DATABASE;
  if (template === undefined)
    throw new Error('TEST_TEMPLATE_DATABASE is not set: run the tests through vitest.config.ts');
  const database = await createDatabase('fon_test', template);
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  return {
    url: database.url,
    pool,
    async drop() {
      await pool.end();
      await database.drop();
    },
  };
}
