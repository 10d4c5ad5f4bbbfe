import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type PgRelay, startPgRelay } from '../../bench/pgRelay.js';
import { POSTGRES_URL } from '../support/services.js';

const STATEMENTS = 40;
const DELAY_MS = 5;

/** Milliseconds that `count` sequential `select 1` take on one connection to `url`, after one to warm it. */
async function sequentialSelects(url: string, count: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('select 1');
    const started = performance.now();
    for (let i = 0; i < count; i++) await client.query('select 1');
    return performance.now() - started;
  } finally {
    await client.end();
  }
}

// Against the real PostgreSQL: the relay must cost what a network hop costs, once per round trip.
describe('the PostgreSQL relay in front of a real server', () => {
  let relay: PgRelay | undefined;
  afterEach(async () => {
    await relay?.close();
    relay = undefined;
  });

  it('adds its delay to every round trip of sequential statements', async () => {
    relay = await startPgRelay(POSTGRES_URL, DELAY_MS);
    const direct = await sequentialSelects(POSTGRES_URL, STATEMENTS);
    const relayed = await sequentialSelects(relay.url, STATEMENTS);
    expect(relayed - direct).toBeGreaterThanOrEqual(STATEMENTS * DELAY_MS);
    // Each statement's hold is measured, the warm-up's and the connection's among them.
    const held = relay.takeHeldMs();
    expect(held.length).toBeGreaterThanOrEqual(STATEMENTS);
    for (const ms of held) expect(ms).toBeGreaterThanOrEqual(DELAY_MS - 1);
  });
});
