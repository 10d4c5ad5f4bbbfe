// /health is what Cloud Foundry's HTTP health check calls, with a 1 s timeout by default. It must answer in time
// when the service's pool is saturated (200: the database is fine, only busy) and when the database is really
// gone (503). Both bounds are set against waits that would otherwise last 5 to 10 s, so a slow machine cannot
// make them pass or fail by chance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Service } from '../../src/service/buildService.js';
import { startTestService } from '../support/harness.js';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
let proxy: TcpProxy;
let service: Service;
const POOL_SIZE = 3;
const SLOW_QUERY = 'select pg_sleep(10)';

beforeAll(async () => {
  proxy = await startTcpProxy(world.db.url);
  service = await startTestService({
    ...world.endpoints(),
    databaseUrl: proxy.url,
    env: { DATABASE_POOL_SIZE: String(POOL_SIZE) },
  });
});
afterAll(async () => {
  proxy?.forward();
  await service?.stop();
  await proxy?.close();
});

async function sleeping(): Promise<number> {
  const { rows } = await world.db.pool.query<{ n: number }>(
    `select count(*)::int as "n" from pg_stat_activity
      where datname = current_database() and query = $1::text and state = 'active'`,
    [SLOW_QUERY],
  );
  return rows[0]?.n ?? 0;
}

async function timedHealth() {
  const started = performance.now();
  const res = await service.app.inject({ method: 'GET', url: '/health' });
  return { res, ms: performance.now() - started };
}

describe('/health within the platform timeout', () => {
  it('answers 200 in under 1 s while every connection of the service pool is held by a 10 s query', async () => {
    // Its own connection is opened by the first probe, as the platform's first check would.
    expect((await timedHealth()).res.statusCode).toBe(200);
    const slow = Array.from({ length: POOL_SIZE }, () =>
      service.pool.query(SLOW_QUERY).catch((err: Error) => err),
    );
    try {
      await eventually('every pool connection in a slow query', async () => (await sleeping()) === POOL_SIZE);
      expect(service.pool.idleCount).toBe(0);
      expect(service.pool.totalCount).toBe(POOL_SIZE);
      const { res, ms } = await timedHealth();
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'UP', checks: { database: 'up' } });
      expect(ms).toBeLessThan(1000);
    } finally {
      await world.db.pool.query(
        `select pg_cancel_backend(pid) from pg_stat_activity where datname = current_database() and query = $1::text`,
        [SLOW_QUERY],
      );
      await Promise.all(slow);
    }
  });

  it('answers 503 within 1 s when the database stops answering', async () => {
    expect((await timedHealth()).res.statusCode).toBe(200);
    proxy.blackhole();
    try {
      // Twice: once on the open connection that no longer answers, once on a new one that never completes.
      for (let probe = 0; probe < 2; probe++) {
        const { res, ms } = await timedHealth();
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ status: 'DOWN', ready: false, checks: { database: 'down' } });
        expect(ms).toBeLessThan(1000);
      }
    } finally {
      proxy.forward();
    }
  });
});
