// Refusing a message is durable before its delivery budget resets: the dead letter and the reset of the count
// are one transaction. Storing the dead letter is made to fail for real, with a lock on dead_letter held in a
// second connection while the service's sessions have a lock_timeout, through the real AMQP consumer and the
// real webhook.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { buildTestService, startTestService } from '../support/harness.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const MAX_DELIVERIES = 2;
const LAST_ERROR = 'TransientError: S/4HANA answered 503';

const world = useWorld();

/** The service's sessions give up on a lock after 300 ms, so a held lock fails the statement waiting for it. */
function impatientEnv(): Record<string, string> {
  const url = new URL(world.db.url);
  url.searchParams.set('options', '-c lock_timeout=300');
  return { DATABASE_URL: url.toString(), MAX_DELIVERIES: String(MAX_DELIVERIES) };
}

/** An event whose deliveries have all been used up: its next delivery is past the limit. */
async function atDeliveryLimit(id: string): Promise<void> {
  await world.db.pool.query(
    `insert into event_attempt (source, id, attempts, last_error) values ($1::text, $2::text, $3::int, $4::text)`,
    [S4_SOURCE, id, MAX_DELIVERIES, LAST_ERROR],
  );
}

/** Holds a lock that keeps every insert into dead_letter waiting, until the returned function lets go. */
async function blockDeadLetters(): Promise<() => Promise<void>> {
  const holder = new pg.Client({ connectionString: world.db.url });
  await holder.connect();
  await holder.query('begin');
  await holder.query('lock table dead_letter in share mode');
  return async () => {
    await holder.query('commit');
    await holder.end();
  };
}

async function attempts(id: string): Promise<number | undefined> {
  const { rows } = await world.db.pool.query<{ attempts: number }>(
    `select attempts from event_attempt where source = $1::text and id = $2::text`,
    [S4_SOURCE, id],
  );
  return rows[0]?.attempts;
}

async function deadLetterReasons(id: string): Promise<string[]> {
  const { rows } = await world.db.pool.query<{ reason: string }>(
    `select reason from dead_letter where source = $1::text and event_id = $2::text`,
    [S4_SOURCE, id],
  );
  return rows.map((row) => row.reason);
}

const DELIVERY_LIMIT_REASON = new RegExp(
  `^delivery limit reached: \\d+ deliveries did not complete \\(last error: ${LAST_ERROR}\\)$`,
);

describe('refusing a message whose dead letter cannot be stored yet', () => {
  let queue: TestQueue;
  beforeAll(async () => {
    queue = await createTestQueue('fon-refusal');
  });
  afterAll(() => queue.delete());

  it('over AMQP: releases it instead of rejecting it, keeps its delivery count, and dead-letters it with the reason on the next delivery', async () => {
    const id = 'refusal-amqp-1';
    await atDeliveryLimit(id);
    const logLines: string[] = [];
    const service = await startTestService({
      ...world.endpoints(),
      queueAddress: queue.address,
      env: { ...impatientEnv(), LOG_LEVEL: 'warn' },
      logLines,
    });
    const unblock = await blockDeadLetters();
    try {
      await world.publisher.send(queue.address, [{ body: salesOrderEvent({ id }) }]);
      await eventually('a refusal that could not store its dead letter', async () =>
        logLines.some((line) => line.includes('dead letter not stored for now') && line.includes(id)),
      );
      // Released, not rejected: nothing reached the broker's dead-letter queue or the table, and the count of
      // deliveries is still there (one more with every redelivery), not reset.
      expect(await queue.drainDeadLetters()).toEqual([]);
      expect(await attempts(id)).toBeGreaterThan(MAX_DELIVERIES);
    } finally {
      await unblock();
    }
    try {
      const reasons = await eventually('the dead letter', async () => {
        const stored = await deadLetterReasons(id);
        return stored.length > 0 ? stored : undefined;
      });
      expect(reasons).toHaveLength(1);
      expect(reasons[0]).toMatch(DELIVERY_LIMIT_REASON);
      const rejected = await eventually('the rejected message in the dead-letter queue', async () => {
        const letters = await queue.drainDeadLetters();
        return letters.length > 0 ? letters : undefined;
      });
      expect(rejected).toHaveLength(1);
      expect(JSON.parse(rejected[0]?.body ?? '{}').id).toBe(id);
      // Dead-lettered, so the count is cleared with it: a replay starts with a full budget.
      expect(await attempts(id)).toBeUndefined();
    } finally {
      await service.stop();
    }
  });

  it('over the webhook: answers 503 with its delivery count kept, then 202 with the reason on the next delivery', async () => {
    const id = 'refusal-webhook-1';
    await atDeliveryLimit(id);
    const service = await buildTestService({
      ...world.endpoints(),
      env: impatientEnv(),
    });
    const post = () =>
      service.app.inject({
        method: 'POST',
        url: '/events',
        headers: { 'content-type': 'application/cloudevents+json' },
        payload: salesOrderEvent({ id }),
      });
    try {
      const unblock = await blockDeadLetters();
      let first: Awaited<ReturnType<typeof post>>;
      try {
        first = await post();
      } finally {
        await unblock();
      }
      expect(first.statusCode).toBe(503);
      expect(first.headers['retry-after']).toBeDefined();
      expect(await attempts(id)).toBe(MAX_DELIVERIES + 1);
      expect(await deadLetterReasons(id)).toEqual([]);

      const next = await post();
      expect(next.statusCode).toBe(202);
      expect(next.json()).toMatchObject({
        status: 'dead-lettered',
        reason: expect.stringMatching(DELIVERY_LIMIT_REASON),
        deadLetterId: expect.any(String),
      });
      expect(await deadLetterReasons(id)).toEqual([next.json().reason]);
      expect(await attempts(id)).toBeUndefined();
    } finally {
      await service.stop();
    }
  });
});
