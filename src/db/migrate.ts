import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { type RetryPolicy, retry } from '../retry.js';
import { withTransaction } from './transaction.js';

const MIGRATIONS_DIR = new URL('../../db/migrations/', import.meta.url);
// Any constant shared by every instance: several instances starting at once wait here in turn.
export const MIGRATION_LOCK = 7_346_112;
// A database failing over or restarting just as an instance starts is waited for (about 15 s on average, 30 s at
// most), within Cloud Foundry's 60 s start timeout, instead of failing the start and crash-looping meanwhile.
const START_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 500, maxDelayMs: 8000 };

/**
 * Applies the numbered SQL files in db/migrations that this database has not seen yet, in order,
 * in one transaction under an advisory lock. Forward-only: a file once released is never edited.
 */
export async function migrate(pool: Pool, dir: URL = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((name) => /^\d{4}_.+\.sql$/.test(name)).sort();
  return withTransaction(pool, async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`create table if not exists schema_migration (
      name text primary key,
      applied_at timestamptz not null default now()
    )`);
    const { rows } = await tx.query<{ name: string }>('select name from schema_migration');
    const applied = new Set(rows.map((row) => row.name));
    const pending = files.filter((name) => !applied.has(name));
    for (const name of pending) {
      await tx.query('insert into schema_migration (name) values ($1)', [name]);
      await tx.query(await readFile(join(dir.pathname, name), 'utf8'));
    }
    return pending;
  });
}

/** migrate() at start: a database that is unavailable for now (refused, restarting, session lost) is retried. */
export function migrateAtStart(pool: Pool, logger: Logger): Promise<string[]> {
  return retry(
    () =>
      migrate(pool).catch((err: unknown) => {
        logger.warn({ err }, 'database not ready for migrations');
        throw err;
      }),
    START_RETRY,
  );
}
