import type { Pool, PoolClient } from 'pg';
import { withClient } from './checkout.js';

/** Anything that runs a query: the pool itself (one statement, auto-commit) or a client inside a transaction. */
export type Executor = Pick<PoolClient, 'query'>;

/**
 * Owns BEGIN / COMMIT / ROLLBACK; the connection itself is owned by withClient. The callback must do no network
 * I/O besides its queries: a transaction held open while waiting on S/4HANA or SMTP holds locks for nothing.
 */
export function withTransaction<T>(pool: Pool, work: (tx: Executor) => Promise<T>): Promise<T> {
  return withClient(pool, async (client, discard) => {
    try {
      await client.query('begin');
      const result = await work(client);
      await client.query('commit');
      return result;
    } catch (err) {
      // A failed rollback means the connection itself is gone: do not hand it back to the pool.
      await client.query('rollback').catch(discard);
      throw err;
    }
  });
}
