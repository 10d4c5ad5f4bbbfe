// The consumer's flow control against the real broker: never more than AMQP_PREFETCH unsettled messages, and
// a settled message's place refilled while most of the others are still held, not once three quarters of
// them are settled (the client's own low-water mark).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/loadConfig.js';
import type { Handled, HandleEvent } from '../../src/events/handleEvent.js';
import { createAmqpConsumer } from '../../src/messaging/amqpConsumer.js';
import { createPublisher, createTestQueue, type Publisher, type TestQueue } from '../support/broker.js';
import { guardedLogger } from '../support/logGuard.js';
import { serviceEnv } from '../support/serviceEnv.js';
import { expectAmqp10 } from '../support/services.js';
import { eventually } from '../support/waits.js';

const PREFETCH = 20;
const logger = guardedLogger();

let queue: TestQueue;
let publisher: Publisher;

beforeAll(async () => {
  await expectAmqp10();
  queue = await createTestQueue('fon-flow');
  publisher = await createPublisher();
});

afterAll(async () => {
  await publisher?.close();
  await queue?.delete();
});

/** A handler that holds every message until the test lets it go, and the most it ever held at once. */
function heldHandler() {
  const waiting: Array<() => void> = [];
  let held = 0;
  let mostHeld = 0;
  let letAllGo = false;
  const handle: HandleEvent = async () => {
    if (!letAllGo) {
      held += 1;
      mostHeld = Math.max(mostHeld, held);
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    return { outcome: { kind: 'accept', result: 'applied' }, event: undefined, log: logger } as Handled;
  };
  return {
    handle,
    held: () => held,
    mostHeld: () => mostHeld,
    /** Lets `count` go; they count as settled from now. */
    settle(count: number) {
      for (const resolve of waiting.splice(0, count)) {
        held -= 1;
        resolve();
      }
    },
    settleAll() {
      letAllGo = true;
      held = 0;
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

describe('flow control', () => {
  it('holds at most the prefetch and refills the places of settled messages while most are still held', async () => {
    // The service's own settings for the local broker; nothing here reaches the database, S/4HANA or SMTP.
    const { amqp } = loadConfig({
      ...serviceEnv({
        databaseUrl: 'postgres://unused',
        s4Url: 'http://unused',
        smtpUrl: 'smtp://unused',
        queueAddress: queue.address,
      }),
      AMQP_PREFETCH: String(PREFETCH),
    });
    if (amqp === undefined) throw new Error('no AMQP settings');
    const messages = 3 * PREFETCH;
    await publisher.send(
      queue.address,
      Array.from({ length: messages }, (_, i) => ({ body: `{"n":${i}}`, contentType: 'application/json' })),
    );
    const handler = heldHandler();
    const consumer = createAmqpConsumer({
      amqp,
      handle: handler.handle,
      logger,
    });
    consumer.start();
    try {
      await eventually('the prefetch is held', async () => handler.held() === PREFETCH);
      // Whatever the broker had sent before it saw the window full lands meanwhile: none beyond the prefetch.
      await sleep(500);
      expect(handler.held()).toBe(PREFETCH);
      // A tenth and then some settled: 14 of 20 still held, far above the client's own refill at 5.
      handler.settle(PREFETCH / 10 + 4);
      await eventually('the settled places are refilled', async () => handler.held() === PREFETCH);
      handler.settleAll();
      await eventually('every message is settled', async () => queue.isIdle());
      expect(handler.mostHeld()).toBe(PREFETCH);
    } finally {
      await consumer.stop(1000);
    }
  });
});
