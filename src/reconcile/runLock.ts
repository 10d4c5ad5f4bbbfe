// One run per family of an S/4HANA system at a time, across instances: a PostgreSQL session advisory lock, held
// on a connection of its own for the whole run. An instance that dies or loses its database session loses the lock
// with it, so nothing is left to expire; the run that loses its session notices at its next page and stops.
import type { Pool, PoolClient } from 'pg';
import { checkOut } from '../db/checkout.js';

export interface RunLock {
  /** Throws when the lock's session is gone: the run must not go on without it. */
  held(): Promise<void>;
  release(): Promise<void>;
}

// The first half of the two-key advisory lock: reconciliation's own space, apart from the migrations' lock.
const SPACE = 'fon.reconcile';

/** The family's lock, or undefined when another run holds it. */
export async function tryRunLock(pool: Pool, source: string, family: string): Promise<RunLock | undefined> {
  let broken: unknown;
  // A session that dies between queries reports it here: kept for held(), instead of crashing the process.
  const onError = (err: unknown) => {
    broken = err;
  };
  const client: PoolClient = await checkOut(pool, onError);
  const key = [SPACE, `${source}|${family}`];
  try {
    const { rows } = await client.query<{ locked: boolean }>(
      'select pg_try_advisory_lock(hashtext($1::text), hashtext($2::text)) as locked',
      key,
    );
    if (rows[0]?.locked !== true) {
      handBack(client, onError);
      return undefined;
    }
  } catch (err) {
    handBack(client, onError, true);
    throw err;
  }
  return {
    async held() {
      if (broken !== undefined) throw broken;
      await client.query('select 1');
    },
    async release() {
      let lost = broken !== undefined;
      if (!lost) {
        try {
          await client.query('select pg_advisory_unlock(hashtext($1::text), hashtext($2::text))', key);
        } catch {
          // The session is gone, and the lock with it.
          lost = true;
        }
      }
      handBack(client, onError, lost);
    },
  };
}

/**
 * Returns the client to the pool, destroyed if its session is gone. Released before the holder's listener goes,
 * so that the pool's own listener is in place first: a session ending in between would otherwise be an 'error'
 * event nobody listens to, and kill the process.
 */
function handBack(client: PoolClient, onError: (err: unknown) => void, destroy = false): void {
  client.release(destroy);
  client.off('error', onError);
}
