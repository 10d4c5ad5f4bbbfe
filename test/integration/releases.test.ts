// How the AMQP consumer gives a message back: a rejection whose reason cannot be stored yet becomes a release, so
// the message is never dead-lettered without its reason; and releases that follow each other wait longer and
// longer, so an outage does not burn the broker's redelivery budget.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import type { Service } from '../../src/service/buildService.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { startTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
let queue: TestQueue;
let service: Service;

afterEach(async () => {
  await service?.stop();
  await queue?.delete();
  world.s4.setFault(undefined);
});

const { newOrder } = orderMaker(() => world.s4, 7_600_000);

async function start(logLines: string[] = []): Promise<void> {
  queue = await createTestQueue('fon-releases');
  service = await startTestService({
    ...world.endpoints(),
    queueAddress: queue.address,
    logLines,
    env: { LOG_LEVEL: 'warn' },
  });
}

/** Backends of this database waiting for a lock while inserting a dead letter. */
async function deadLetterInsertsWaiting(): Promise<number[]> {
  const { rows } = await world.db.pool.query<{ pid: number }>(
    `select pid from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and query like 'insert into dead_letter%'`,
  );
  return rows.map((row) => row.pid);
}

describe('releases over AMQP', () => {
  it('releases a message whose dead letter cannot be stored yet, and rejects it with its reason once it can', async () => {
    await start();
    // Another session holds the dead-letter table, so the service's insert of the reason waits.
    const holder = new pg.Client({ connectionString: world.db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table dead_letter in access exclusive mode');
      await world.publisher.send(queue.address, [{ body: '{"specversion":"1.0","id":"unstorable-1"' }]);

      // The insert fails for a passing reason: its session is terminated, as in a database failover.
      const [waiting] = await eventually('the dead letter insert to wait', async () => {
        const pids = await deadLetterInsertsWaiting();
        return pids.length === 1 ? pids : undefined;
      });
      await holder.query('select pg_terminate_backend($1)', [waiting]);

      // Released, not rejected: the message comes back and tries again, and the dead-letter queue is empty.
      await eventually('the redelivery to wait for the table', async () => {
        const pids = await deadLetterInsertsWaiting();
        return pids.length === 1 && pids[0] !== waiting;
      });
      expect(await queue.drainDeadLetters()).toEqual([]);
      await holder.query('commit');
    } finally {
      await holder.end();
    }

    const letters = await eventually('the message in the dead-letter queue', async () => {
      const drained = await queue.drainDeadLetters();
      return drained.length > 0 ? drained : undefined;
    });
    expect(letters.map((letter) => letter.body)).toEqual(['{"specversion":"1.0","id":"unstorable-1"']);
    const { rows } = await world.db.pool.query<{ reason: string }>(
      `select reason from dead_letter where body = convert_to($1::text, 'UTF8')`,
      ['{"specversion":"1.0","id":"unstorable-1"'],
    );
    expect(rows).toEqual([{ reason: expect.stringMatching(/^body is not valid JSON/) }]);
    await eventually('nothing ready or in flight', () => queue.isIdle());
  });

  it('waits at least half the time releases have followed each other before the next release', async () => {
    await start();
    const salesOrder = newOrder();
    // Each delivery reads S/4HANA 3 times (the harness's retry policy) before it is released; 4 deliveries fail.
    const reads: number[] = [];
    world.s4.setFault((order) => {
      if (order !== salesOrder) return 'ok';
      reads.push(Date.now());
      return reads.length <= 12 ? 'unavailable' : 'ok';
    });
    await world.publisher.send(queue.address, [{ body: salesOrderEvent({ salesOrder }) }]);
    await eventually('the fifth delivery applied', async () => {
      const { rows } = await world.db.pool.query(
        `select 1 from processed_event where family = 'salesOrder' and key = $1`,
        [salesOrder],
      );
      return rows.length === 1;
    });

    expect(reads).toHaveLength(13);
    // Read 3k is the last try of delivery k, read 3k+1 the first of the next. The streak began after read 3 and
    // before read 4; the pause before release k is at least half of max(250 ms, the streak so far), so the gap
    // between deliveries is at least that. Lower bounds only: a busy machine makes gaps longer, never shorter.
    const at = (n: number) => reads[n - 1] as number;
    for (let k = 1; k <= 4; k++) {
      const streak = k === 1 ? 0 : at(3 * k) - at(4);
      expect(at(3 * k + 1) - at(3 * k), `gap after delivery ${k}`).toBeGreaterThanOrEqual(
        Math.max(250, streak) / 2 - 5,
      );
    }
  });
});
