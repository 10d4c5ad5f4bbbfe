// The consumer's flow control against the real broker: never more than AMQP_PREFETCH unsettled messages, and
// a settled message's place refilled while most of the others are still held, not once three quarters of
// them are settled (the client's own low-water mark). Without AMQP_PREFETCH the window adapts: it grows and
// shrinks under a backlog without the client ever dropping the connection (a transfer beyond the link credit
// or the session window ends it).
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
const CEILING = 200;
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
    const amqp = settings({ AMQP_PREFETCH: String(PREFETCH) });
    const messages = 3 * PREFETCH;
    await publisher.send(queue.address, bodies(messages));
    const handler = heldHandler();
    const consumer = createAmqpConsumer({
      amqp,
      handle: handler.handle,
      logger,
    });
    consumer.start();
    try {
      await eventually('the prefetch is held', async () => handler.held() === PREFETCH);
      expect(consumer.creditWindow()).toBe(PREFETCH);
      // Whatever the broker had sent before it saw the window full lands meanwhile: none beyond the prefetch.
      await sleep(500);
      expect(handler.held()).toBe(PREFETCH);
      // A tenth and then some settled: 14 of 20 still held, far above the client's own refill at 5.
      handler.settle(PREFETCH / 10 + 4);
      await eventually('the settled places are refilled', async () => handler.held() === PREFETCH);
      handler.settleAll();
      await eventually('every message is settled', async () => queue.isIdle());
      expect(handler.mostHeld()).toBe(PREFETCH);
      expect(consumer.creditWindow()).toBe(PREFETCH);
    } finally {
      await consumer.stop(1000);
    }
  });

  it('pins the window at AMQP_PREFETCH under a backlog of slow reads', async () => {
    const messages = 1500;
    await publisher.send(queue.address, bodies(messages));
    const service = modelService(logger);
    service.mode = 'slowReads';
    const consumer = createAmqpConsumer({
      amqp: settings({ AMQP_PREFETCH: '30' }),
      handle: service.handle,
      logger,
    });
    service.window = consumer.creditWindow;
    consumer.start();
    try {
      await eventually('the backlog is drained', async () => service.settled() === messages, 60_000);
      expect(service.mostHeld()).toBe(30);
      expect(new Set(service.windows())).toEqual(new Set([30]));
      await eventually('every message is settled', async () => queue.isIdle());
    } finally {
      await consumer.stop(1000);
    }
  });

  it('grows the window under a backlog of slow reads, never holds more than it granted, and shrinks it when holds only lengthen', async () => {
    // Reads slow enough that a window of 150 needs under 400 deliveries/s: the broker keeps that up while other
    // test files load the machine, so what is measured is the window, not the machine's spare CPU.
    const service = modelService(logger, 400);
    // The window learns only under a backlog, so the queue is kept a few thousand messages ahead of the
    // consumer until the test lets go, however fast this machine drains it. In batches: the publisher's client
    // buffers at most 2,048 unsettled messages.
    let published = 0;
    let feeding = true;
    const feeder = (async () => {
      while (feeding) {
        if (published - service.settled() < 4000) {
          await publisher.send(queue.address, bodies(1000));
          published += 1000;
        } else await sleep(50);
      }
    })();
    let reconnects = 0;
    const consumer = createAmqpConsumer({
      amqp: settings({}),
      handle: service.handle,
      logger,
      onReconnect: () => {
        reconnects += 1;
      },
    });
    service.window = consumer.creditWindow;
    consumer.start();
    try {
      // S/4HANA answers in 400 ms whatever the number of reads: more in flight, more settled per second.
      service.mode = 'slowReads';
      await eventually('the window grows', async () => consumer.creditWindow() >= 150, 60_000);
      const grown = consumer.creditWindow();
      // Now a database that commits 8 at a time, 10 ms each: more in flight only waits.
      service.mode = 'busyDatabase';
      await eventually('the window shrinks', async () => consumer.creditWindow() <= grown / 2, 60_000);
      feeding = false;
      await feeder;
      service.mode = 'letGo';
      await eventually('every message is settled', async () => queue.isIdle(), 60_000);
      expect(service.beyondWindow()).toBe(0);
      expect(service.mostHeld()).toBeLessThanOrEqual(CEILING);
      expect(service.mostHeld()).toBeGreaterThan(50);
      // No "link credit underflow", no "incoming window overflow": the connection never dropped.
      expect(reconnects).toBe(0);
      expect(consumer.isAttached()).toBe(true);
    } finally {
      feeding = false;
      await feeder;
      await consumer.stop(1000);
    }
  }, 200_000);
});

/** The service's own settings for the local broker; nothing here reaches the database, S/4HANA or SMTP. */
function settings(extra: Record<string, string>) {
  const { amqp } = loadConfig({
    ...serviceEnv({
      databaseUrl: 'postgres://unused',
      s4Url: 'http://unused',
      smtpUrl: 'smtp://unused',
      queueAddress: queue.address,
    }),
    ...extra,
  });
  if (amqp === undefined) throw new Error('no AMQP settings');
  return amqp;
}

function bodies(count: number) {
  return Array.from({ length: count }, (_, i) => ({ body: `{"n":${i}}`, contentType: 'application/json' }));
}

/**
 * A stand-in for the service behind the consumer: `slowReads` holds each message `slowReadMs`, however many are in
 * flight (an S/4HANA read); `busyDatabase` lets 8 through at a time, 10 ms each (more in flight only waits);
 * `letGo` settles at once. It records the most held at once, the window at each arrival, and arrivals beyond the
 * largest window granted until then.
 */
function modelService(log: typeof logger, slowReadMs = 100) {
  let held = 0;
  let mostHeld = 0;
  let settled = 0;
  let busy = 0;
  let beyond = 0;
  let largest = 0;
  const waiting: Array<() => void> = [];
  const windows: number[] = [];
  const state = {
    mode: 'letGo' as 'slowReads' | 'busyDatabase' | 'letGo',
    window: undefined as (() => number) | undefined,
    handle: (async () => {
      held += 1;
      mostHeld = Math.max(mostHeld, held);
      const window = state.window?.();
      if (window !== undefined) {
        windows.push(window);
        // A smaller window takes effect as messages are settled; more than the largest granted never arrive.
        largest = Math.max(largest, window);
        if (held > largest) beyond += 1;
      }
      if (state.mode === 'slowReads') await sleep(slowReadMs);
      else if (state.mode === 'busyDatabase') {
        if (busy >= 8) await new Promise<void>((resolve) => waiting.push(resolve));
        busy += 1;
        await sleep(10);
        busy -= 1;
        waiting.shift()?.();
      }
      held -= 1;
      settled += 1;
      return { outcome: { kind: 'accept', result: 'applied' }, event: undefined, log } as Handled;
    }) as HandleEvent,
    mostHeld: () => mostHeld,
    settled: () => settled,
    windows: () => windows,
    beyondWindow: () => beyond,
  };
  return state;
}
