// The one way a client leaves the pool. pg reports a lost connection (a failover, a restart, a terminated session)
// as an 'error' event on the client. In the pool a client has the pool's listener; once checked out it has none,
// and an 'error' event without a listener is an uncaught exception: the process dies on a routine database event.
// Everything that holds a client across statements (a transaction, a session lock) checks it out here.
import type { Pool, PoolClient } from 'pg';
import { TransientError } from '../errors.js';

/** Marks the client as unfit to be handed back, e.g. after a ROLLBACK or an unlock that failed. */
export type Discard = (why: Error) => void;

/**
 * Runs `work` with a client of its own and owns the client for as long as it is out: an error listener is
 * attached the whole time, and a client that failed is destroyed, never handed back. A lost connection
 * surfaces as a TransientError from `work`'s promise (retried, then released like any database blip), never
 * as an event nobody listens to.
 */
export async function withClient<T>(
  pool: Pool,
  work: (client: PoolClient, discard: Discard) => Promise<T>,
): Promise<T> {
  let lost: Error | undefined;
  let unfit: Error | undefined;
  const onError = (err: Error) => {
    lost ??= err;
  };
  const client = await checkOut(pool, onError);
  try {
    return await work(client, (why) => {
      unfit ??= why;
    });
  } catch (err) {
    // A session ended by the server (terminated, shut down) answers the statement in progress with a FATAL error
    // before the client sees the connection close: that error is the loss.
    if ((err as { severity?: unknown }).severity === 'FATAL') lost ??= err as Error;
    // The query that noticed the loss may say only "not queryable": name the loss itself.
    if (lost !== undefined)
      throw new TransientError(`database connection lost: ${lost.message}`, { cause: err });
    throw err;
  } finally {
    // Released first, so that the pool's own listener is in place before this one goes.
    client.release(lost ?? unfit);
    client.off('error', onError);
  }
}

/**
 * pool.connect() with `onError` attached in the pool's own callback, not after an await. A client handed over
 * from a previous holder arrives while pg is still parsing that holder's last reply; when the same read also
 * carries the server's "terminating connection" message, pg emits it before an await could resume, and a
 * listener attached only then would be too late. Also for a client held beyond one piece of work (a session lock):
 * its holder then owns the listener and the release.
 */
export function checkOut(pool: Pool, onError: (err: Error) => void): Promise<PoolClient> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client) => {
      if (err || client === undefined) {
        reject(err ?? new TransientError('the pool gave no client'));
        return;
      }
      client.on('error', onError);
      resolve(client);
    });
  });
}
