// The run lock holds a database session of its own for a whole run. A session that ends while the lock is being
// let go (a failover, a restart) must be a failed unlock, never an 'error' event without a listener: that is an
// uncaught exception, and it would kill the instance.
import { connect, createServer, type Socket } from 'node:net';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tryRunLock } from '../../src/reconcile/runLock.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A relay in front of PostgreSQL that resets the client's connection as soon as the client sends a statement
 * containing `text`, before PostgreSQL sees it: the session is gone while that statement is in flight.
 */
async function resetOn(targetUrl: string, text: string) {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
    }
    client.on('data', (chunk: Buffer) => {
      if (chunk.includes(text)) {
        client.resetAndDestroy();
        upstream.destroy();
      } else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the relay has no port');
  const url = new URL(targetUrl);
  url.host = `127.0.0.1:${address.port}`;
  return {
    url: url.toString(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let database: TestDatabase;
beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  await database.drop();
});

describe('the reconciliation run lock', () => {
  it('lets go of a lock whose session ends during the unlock without an uncaught error, and frees the lock', async () => {
    const relay = await resetOn(database.url, 'pg_advisory_unlock');
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
