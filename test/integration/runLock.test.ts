// The run lock holds a database session of its own for a whole run. A session that ends while the lock is being
// let go (a failover, a restart) must be a failed unlock, never an 'error' event without a listener: that is an
// uncaught exception, and it would kill the instance.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tryRunLock } from '../../src/reconcile/runLock.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTcpProxy } from '../support/tcpProxy.js';

let database: TestDatabase;
beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  await database.drop();
});

describe('the reconciliation run lock', () => {
  it('lets go of a lock whose session ends during the unlock without an uncaught error, and frees the lock', async () => {
    const relay = await startTcpProxy(database.url);
    // The session is gone while the unlock is in flight.
    relay.resetOn('pg_advisory_unlock');
    const pool = new pg.Pool({ connectionString: relay.url, max: 2 });
    const poolErrors: Error[] = [];
    pool.on('error', (err) => poolErrors.push(err));
    const uncaught: Error[] = [];
    const onUncaught = (err: Error) => uncaught.push(err);
    process.prependListener('uncaughtException', onUncaught);
    try {
      const lock = await tryRunLock(pool, '/default/sap.s4.beh/S4HCLNT100', 'salesOrder');
      expect(lock).toBeDefined();
      // Another instance cannot have it while it is held.
      expect(await tryRunLock(database.pool, '/default/sap.s4.beh/S4HCLNT100', 'salesOrder')).toBeUndefined();

      await lock?.release();
      await new Promise((resolve) => setTimeout(resolve, 200));

      expect(uncaught).toEqual([]);
      // The session died with its lock: another instance takes it.
      const next = await tryRunLock(database.pool, '/default/sap.s4.beh/S4HCLNT100', 'salesOrder');
      expect(next).toBeDefined();
      await next?.release();
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      await pool.end();
      await relay.close();
    }
  });
});
