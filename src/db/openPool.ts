import pg from 'pg';
import type { Logger } from 'pino';
import { migrateAtStart } from './migrate.js';

/** The service's pool, its database migrated; ended again should migrating fail, so a failed start leaves it closed. */
export async function openPool(config: pg.PoolConfig, logger: Logger): Promise<pg.Pool> {
  const pool = new pg.Pool({ ...config, connectionTimeoutMillis: 5000 });
  // An idle connection dropped by a database restart must not crash the process; the pool replaces it.
  pool.on('error', (err) => logger.warn({ err }, 'idle database connection failed'));
  try {
    const applied = await migrateAtStart(pool, logger);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  } catch (err) {
    await pool.end();
    throw err;
  }
  return pool;
}
