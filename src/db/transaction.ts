import type { Pool, PoolClient } from 'pg';

/** Anything that runs a query: the pool itself (one statement, auto-commit) or a client inside a transaction. */
export type Executor = Pick<PoolClient, 'query'>;

/**
 * Owns BEGIN / COMMIT / ROLLBACK and the connection's release. The callback must do no network I/O
 * besides its queries: a transaction held open while waiting on S/4HANA or SMTP holds locks for nothing.
 */
export async function withTransaction<T>(pool: Pool, work: (tx: Executor) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (err) {
    // A failed rollback means the connection itself is gone: do not hand it back to the pool.
    await client.query('rollback').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
