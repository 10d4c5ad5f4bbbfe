import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_URL } from './services.js';

export interface TestDatabase {
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own (cloned from the run's template), dropped by drop(). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = process.env.TEST_TEMPLATE_DATABASE;
  if (template === undefined)
    throw new Error('TEST_TEMPLATE_DATABASE is not set: run the tests through vitest.config.ts');
  const name = `fon_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name} template ${template}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  return {
    url: url.toString(),
    pool,
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
