// A database failover terminates the service's sessions: a client checked out of the pool then loses its
// connection between two statements or in the middle of one. pg reports that as an 'error' event on the client;
// without a listener it is an uncaught exception and the process dies. These tests terminate real PostgreSQL
// backends (pg_terminate_backend) and check that the process stays up and nothing is lost or done twice.

import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import { MIGRATION_LOCK } from '../../src/db/migrate.js';
import { type Executor, withTransaction } from '../../src/db/transaction.js';
import { classify, TransientError } from '../../src/errors.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { startTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { serviceEnv } from '../support/serviceEnv.js';
import { type ServiceProcess, spawnServiceProcess } from '../support/serviceProcess.js';
import { startTcpProxy } from '../support/tcpProxy.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();

const { newOrder } = orderMaker(() => world.s4, 7_600_000);

async function backendPid(tx: Executor): Promise<number> {
  const { rows } = await tx.query<{ pid: number }>('select pg_backend_pid() as "pid"');
  return rows[0]?.pid as number;
}

async function terminate(pid: number): Promise<void> {
  await world.db.pool.query('select pg_terminate_backend($1::int)', [pid]);
}

/** A session of this database, other than `holder`, waiting for a lock `holder` keeps. */
async function waitingOn(holder: Executor): Promise<number | undefined> {
  const { rows } = await world.db.pool.query<{ pid: number }>(
    `select pid from pg_stat_activity
      where datname = current_database() and pid <> $1::int and wait_event_type = 'Lock'`,
    [await backendPid(holder)],
  );
  return rows[0]?.pid;
}

/** Records uncaught exceptions until stop(); `next` resolves at the first one. */
function watchUncaught() {
  const seen: unknown[] = [];
  let notify: () => void = () => {};
  const next = new Promise<void>((resolve) => {
    notify = resolve;
  });
  const listener = (err: unknown) => {
    seen.push(err);
    notify();
  };
  process.on('uncaughtException', listener);
  return { seen, next, stop: () => process.off('uncaughtException', listener) };
}

/** A pool of one connection with the service's idle-error listener, so a client handed back would be reused. */
function onePool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({ connectionString, max: 1 });
  pool.on('error', () => {}); // idle connections are the pool's business, as in the service
  return pool;
}

async function sessionState(pid: number): Promise<string | undefined> {
  const { rows } = await world.db.pool.query<{ state: string }>(
    'select state from pg_stat_activity where pid = $1::int',
    [pid],
  );
  return rows[0]?.state;
}

function expectLost(failure: unknown): void {
  expect(failure).toBeInstanceOf(TransientError);
  expect(classify(failure)).toBe('transient');
  expect(String((failure as Error).message)).toMatch(/^database connection lost: /);
}

describe('a transaction whose session is terminated', () => {
  it('fails as transient between two statements without an uncaught error, and its client is not reused', async () => {
    const uncaught = watchUncaught();
    const pool = onePool(world.db.url);
    try {
      let first = 0;
      const failure = await withTransaction(pool, async (tx) => {
        first = await backendPid(tx);
        // Once the client saw its socket close (or the process saw the error nobody listened to). Not
        // events.once: it rejects on the client's 'error', which can come before terminate() returns and would
        // leave its promise rejected with nobody waiting on it yet.
        const ended = new Promise((resolve) => (tx as pg.PoolClient).once('end', resolve));
        const lost = Promise.race([ended, uncaught.next]);
        await terminate(first);
        await lost;
        await tx.query('select 1');
      }).then(
        () => undefined,
        (err: unknown) => err,
      );

      expect(uncaught.seen).toEqual([]);
      expectLost(failure);
      const next = await withTransaction(pool, backendPid);
      expect(next).not.toBe(first);
      expect(pool.totalCount).toBe(1);
    } finally {
      uncaught.stop();
      await pool.end();
    }
  });

  it("fails as transient when the termination arrives in the same read as the previous holder's last reply", async () => {
    // The relay holds the server's bytes back, then delivers the reply to a query and the termination that
    // followed it in one write: pg parses both in one go, handing the client to the next holder in between.
    const uncaught = watchUncaught();
    const proxy = await startTcpProxy(world.db.url);
    const pool = onePool(proxy.url);
    try {
      const pid = await backendPid(pool);
      const previous = pool.query('select pg_sleep(0.2)');
      await eventually('the query running', async () => (await sessionState(pid)) === 'active');
      proxy.blackhole();
      const failure = withTransaction(pool, backendPid).then(
        () => undefined,
        (err: unknown) => err,
      );
      await eventually('the reply sent and held', async () => (await sessionState(pid)) === 'idle');
      await terminate(pid);
      await eventually('the session gone', async () => (await sessionState(pid)) === undefined);
      proxy.forward();

      await previous;
      expectLost(await failure);
      expect(uncaught.seen).toEqual([]);
      expect(await withTransaction(pool, backendPid)).not.toBe(pid);
    } finally {
      uncaught.stop();
      proxy.forward();
      await pool.end();
      await proxy.close();
    }
  });
});

describe('the service process during a database failover', () => {
  let queue: TestQueue;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    queue = await createTestQueue('fon-failover');
  });
  afterAll(async () => {
    if (service?.alive()) service.child.kill('SIGKILL');
    await queue?.delete();
  });

  it('stays up when the session of its effect transaction is terminated, and applies the event once after redelivery', async () => {
    onTestFailed(() => console.error(`--- service log ---\n${service?.log.slice(-40).join('\n')}`));
    service = spawnServiceProcess({
      ...serviceEnv({ ...world.endpoints(), queueAddress: queue.address }),
      DATABASE_POOL_SIZE: '4',
    });
    const url = await service.ready;
    const running = service;
    const salesOrder = newOrder({ overallDeliveryStatus: 'C' });
    const id = `failover-${salesOrder}`;

    // Every write to the portal table waits while this lock is held, so the service's effect transaction is
    // open (BEGIN sent, its statement waiting) for as long as the test wants: a session to terminate.
    const locker = await world.db.pool.connect();
    await locker.query('begin');
    await locker.query('lock table portal_order_status in exclusive mode');
    const waitingPid = async (): Promise<number | undefined> => {
      if (!running.alive()) throw new Error(`the service exited: ${running.log.slice(-3).join('\n')}`);
      return waitingOn(locker);
    };
    const releases = () =>
      running.log.filter((line) => line.includes('"msg":"event released for redelivery"'));

    let terminated = 0;
    try {
      await world.publisher.send(queue.address, [{ body: salesOrderEvent({ salesOrder, id }) }]);
      // Each try of the effect is terminated until the in-process retries are used up and the message goes
      // back to the broker; the redelivery then finds the database whole again.
      while (releases().length === 0) {
        const pid = await eventually('a transaction of the service waiting on the lock', async () =>
          releases().length > 0 ? 0 : await waitingPid(),
        );
        if (pid === 0) break;
        await terminate(pid);
        terminated++;
        // The next try must not find the same pid still listed.
        await eventually('the session gone', async () => (await waitingPid()) !== pid);
      }
    } finally {
      await locker.query('commit');
      locker.release();
    }

    await eventually('the event applied', async () => {
      const { rows } = await world.db.pool.query(
        `select outcome from processed_event where source = $1::text and id = $2::text`,
        [S4_SOURCE, id],
      );
      return rows[0]?.outcome === 'applied';
    });
    await world.smtp.waitForCount(1);
    await sleep(500); // room for a second, wrong email to show up
    expect(world.smtp.messages.filter((mail) => mail.headers['x-sales-order'] === salesOrder)).toHaveLength(
      1,
    );
    expect(terminated).toBeGreaterThanOrEqual(1);

    expect(running.alive()).toBe(true);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    const entries = running.log.flatMap((line) => {
      try {
        return [JSON.parse(line) as { level: number; msg: string; reason?: string }];
      } catch {
        return [];
      }
    });
    // The loss is a warning on the release, and nothing worse is logged.
    const released = entries.filter((entry) => entry.msg === 'event released for redelivery');
    expect(released).toEqual([
      expect.objectContaining({ level: 40, reason: expect.stringMatching(/database connection lost/) }),
    ]);
    expect(entries.filter((entry) => entry.level >= 50)).toEqual([]);
    expect(entries.filter((entry) => entry.msg === 'event processed')).toHaveLength(1);

    running.child.kill('SIGTERM');
    const [code] = (await running.exited) as [number | null];
    expect(code).toBe(0);
  }, 90_000);
});

describe('a start during a database failover', () => {
  it('retries its migrations when the session waiting for the migration lock is terminated', async () => {
    // Another instance migrating: the new one waits for the lock, and its session is terminated meanwhile.
    const locker = await world.db.pool.connect();
    await locker.query('begin');
    await locker.query('select pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK]);
    const logLines: string[] = [];
    const starting = startTestService({
      ...world.endpoints(),
      env: { LOG_LEVEL: 'warn' },
      logLines,
    }).then(
      (service) => ({ service }),
      (err: unknown) => ({ err }),
    );
    try {
      await terminate(await eventually('the migration waiting on its lock', () => waitingOn(locker)));
      await eventually('the failed try logged', async () =>
        logLines.some((line) => line.includes('not ready')),
      );
    } finally {
      await locker.query('commit');
      locker.release();
    }
    const started = await starting;
    if ('err' in started) throw started.err;
    try {
      expect((await started.service.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      const warnings = logLines.map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(warnings.filter((entry) => entry.msg === 'database not ready for migrations')).toEqual([
        expect.objectContaining({ level: 40 }),
      ]);
      expect(warnings.filter((entry) => entry.level >= 50)).toEqual([]);
    } finally {
      await started.service.stop();
    }
  });
});
