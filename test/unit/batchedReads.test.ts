import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { classify } from '../../src/errors.js';
import type { KeyResult, SalesOrderApi } from '../../src/families/salesOrder/api.js';
import type { SalesOrder } from '../../src/families/salesOrder/entity.js';
import { type BatchedReadOptions, batchReads, MAX_GATHER_MS } from '../../src/s4/batchedReads.js';
import { createDestinationLimit, type DestinationLimitOptions } from '../../src/s4/destinationLimit.js';
import { httpFailure } from '../../src/s4/s4Failure.js';
import { salesOrderOf } from '../fixtures/salesOrder.js';

interface Started {
  keys: string[];
  at: number;
  answer(orders: Record<string, SalesOrder | null | Error>): void;
  fail(err: unknown): void;
}

/** An API whose requests stay open until the test answers them, recording which keys each asked for. */
function controllableApi() {
  const started: Started[] = [];
  const request = (keys: string[]) =>
    new Promise<Map<string, KeyResult>>((resolve, reject) =>
      started.push({
        keys,
        at: Date.now(),
        answer: (orders) =>
          resolve(
            new Map(
              Object.entries(orders).map(([key, value]) => [
                key,
                value instanceof Error ? { error: value } : { document: value },
              ]),
            ),
          ),
        fail: reject,
      }),
    );
  const api: SalesOrderApi = {
    version: 'v2',
    async read(salesOrder) {
      const result = (await request([salesOrder])).get(salesOrder);
      if (result === undefined || 'error' in result)
        throw new Error('test answered a single read without it');
      return result.document;
    },
    readMany: (salesOrders) => request([...salesOrders]),
  };
  return { api, started };
}

const order = (salesOrder: string, status = 'A') =>
  salesOrderOf({ salesOrder, overallSDProcessStatus: status });
const tick = () => new Promise((resolve) => setImmediate(resolve));
const warnings: unknown[] = [];
type Options = Omit<BatchedReadOptions, 'destination'> & DestinationLimitOptions;
const defaults: Options = {
  maxConcurrent: 4,
  batchSize: 50,
  maxWaitMs: 10_000,
  logger: { warn: (...args: unknown[]) => void warnings.push(args) },
};

/**
 * Batched reads (with `options` over the defaults) over an API the test answers, on a destination of their own,
 * and that API's requests.
 */
function batched(options: Partial<Options> = {}) {
  const { api, started } = controllableApi();
  const { maxConcurrent, onPause, ...rest } = { ...defaults, ...options };
  const destination = createDestinationLimit({ maxConcurrent, onPause });
  return { read: batchReads(api, { ...rest, destination }), started };
}

// How long requests take is measured with performance.now(): frozen here unless a test moves it, so that only
// the tests of the gather (rule 3) see a request take time.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('batched S/4HANA reads', () => {
  it('answers callers that arrived during a read with the next read, never the one already running', async () => {
    const { read, started } = batched();
    const first = read('1');
    await tick();
    const second = read('1');
    const third = read('1');
    await tick();
    expect(started).toHaveLength(1);

    started[0]?.answer({ 1: order('1', 'A') });
    expect((await first).document?.overallSDProcessStatus).toBe('A');
    await tick();
    expect(started).toHaveLength(2); // one read for both waiting callers
    started[1]?.answer({ 1: order('1', 'B') });
    expect((await second).document?.overallSDProcessStatus).toBe('B');
    expect((await third).document?.overallSDProcessStatus).toBe('B');
  });

  it('sends a read at once while there is capacity, one request per order arriving alone', async () => {
    const { read, started } = batched();
    const a = read('1');
    await tick();
    const b = read('2');
    await tick();
    expect(started.map((s) => s.keys)).toEqual([['1'], ['2']]);
    started[1]?.answer({ 2: null });
    started[0]?.answer({ 1: order('1') });
    expect((await a).document?.salesOrder).toBe('1');
    expect((await b).document).toBeNull();
  });

  it('gathers orders that wait while every request is busy into one collection read of at most the batch size', async () => {
    const { read, started } = batched({ maxConcurrent: 2, batchSize: 3 });
    const busy = [read('1'), read('2')];
    await tick();
    await tick();
    // Same turn: '1' and '2' share the first request; the second slot takes the next arrivals.
    expect(started.map((s) => s.keys)).toEqual([['1', '2']]);
    const held = read('3');
    await tick();
    expect(started.map((s) => s.keys)).toEqual([['1', '2'], ['3']]);
    const later = ['4', '5', '6', '7', '8'].map((key) => read(key));
    await tick();
    expect(started).toHaveLength(2); // both slots busy: the five wait
    started[0]?.answer({ 1: order('1'), 2: order('2') });
    await Promise.all(busy);
    await tick();
    expect(started[2]?.keys).toEqual(['4', '5', '6']);
    started[1]?.answer({ 3: order('3') });
    await held;
    await tick();
    expect(started[3]?.keys).toEqual(['7', '8']);
    started[2]?.answer({ 4: order('4'), 5: null, 6: order('6') });
    started[3]?.answer({ 7: order('7'), 8: order('8') });
    const answers = await Promise.all(later);
    expect(answers.map((a) => a.document?.salesOrder ?? null)).toEqual(['4', null, '6', '7', '8']);
  });

  it('sends one request per order with a batch size of 1', async () => {
    const { read, started } = batched({ batchSize: 1 });
    const reads = ['1', '2', '3'].map((key) => read(key));
    await tick();
    expect(started.map((s) => s.keys)).toEqual([['1'], ['2'], ['3']]);
    for (const [i, s] of started.entries()) s.answer({ [String(i + 1)]: order(String(i + 1)) });
    await Promise.all(reads);
  });

  it('gives a failed request to every caller that shared it, and reads afresh afterwards', async () => {
    const { read, started } = batched();
    const first = [read('1'), read('2')];
    await tick();
    started[0]?.fail(httpFailure(500, 'down'));
    for (const pending of first) await expect(pending).rejects.toThrow('HTTP 500');
    const again = read('1');
    await tick();
    expect(started).toHaveLength(2);
    started[1]?.answer({ 1: order('1') });
    expect((await again).document?.salesOrder).toBe('1');
  });

  it('fails only the order whose entity could not be mapped, not the others read with it', async () => {
    const { read, started } = batched();
    const [good, bad] = [read('1'), read('2')];
    await tick();
    started[0]?.answer({ 1: order('1'), 2: new Error('not an OData V2 date') });
    expect((await good).document?.salesOrder).toBe('1');
    await expect(bad).rejects.toThrow('not an OData V2 date');
  });

  it('asks again for orders a paged answer did not cover, in a read that started later', async () => {
    const { read, started } = batched();
    const reads = [read('1'), read('2'), read('3')];
    await tick();
    started[0]?.answer({ 1: order('1') }); // 2 and 3 not in this page
    await tick();
    expect(started[1]?.keys).toEqual(['2', '3']);
    started[1]?.answer({ 2: order('2'), 3: null });
    expect((await Promise.all(reads)).map((r) => r.document?.salesOrder ?? null)).toEqual(['1', '2', null]);
  });

  it('stamps each result with the time its request was sent', async () => {
    let now = 1000;
    const { read, started } = batched({ clock: () => new Date(now) });
    const pending = read('1');
    await tick();
    now = 5000;
    started[0]?.answer({ 1: order('1') });
    expect((await pending).readAt.getTime()).toBe(1000);
  });

  it('falls back to one order per request after a collection read is refused with 400, warning once', async () => {
    warnings.length = 0;
    const { read, started } = batched();
    const reads = [read('1'), read('2')];
    await tick();
    expect(started[0]?.keys).toEqual(['1', '2']);
    started[0]?.fail(httpFailure(400, 'Invalid filter'));
    await tick();
    expect(started.slice(1).map((s) => s.keys)).toEqual([['1'], ['2']]);
    started[1]?.answer({ 1: order('1') });
    started[2]?.answer({ 2: order('2') });
    await Promise.all(reads);
    const more = [read('3'), read('4')];
    await tick();
    expect(started.slice(3).map((s) => s.keys)).toEqual([['3'], ['4']]);
    started[3]?.answer({ 3: null });
    started[4]?.answer({ 4: null });
    await Promise.all(more);
    expect(warnings).toHaveLength(1);
  });

  it('falls back without failing anyone when several collection reads in flight are refused', async () => {
    warnings.length = 0;
    const { read, started } = batched({ maxConcurrent: 2 });
    const reads = [read('1'), read('2')];
    await tick();
    const more = [read('3'), read('4')];
    await tick();
    expect(started.map((s) => s.keys)).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
    started[0]?.fail(httpFailure(400, 'Invalid filter'));
    started[1]?.fail(httpFailure(400, 'Invalid filter'));
    // Every order is read again on its own, two at a time; nobody is failed.
    for (let answered = 2; answered < 6; answered++) {
      while (started.length <= answered) await tick();
      const single = started[answered];
      expect(single?.keys).toHaveLength(1);
      single?.answer({ [single.keys[0] as string]: null });
    }
    expect(
      started
        .slice(2)
        .flatMap((s) => s.keys)
        .sort(),
    ).toEqual(['1', '2', '3', '4']);
    await Promise.all([...reads, ...more]);
    expect(warnings).toHaveLength(1);
  });

  it('fails a request whose answer covers none of its orders instead of asking again for ever', async () => {
    const { read, started } = batched();
    const reads = [read('1'), read('2')];
    await tick();
    started[0]?.answer({});
    for (const pending of reads) await expect(pending).rejects.toThrow(/none of the documents/);
    expect(started).toHaveLength(1);
  });

  it('pauses every read on a 429 with Retry-After, counts the pause, then reads the waiting orders again', async () => {
    const paused: number[] = [];
    const { read, started } = batched({ onPause: (s) => paused.push(s) });
    const first = read('1');
    await tick();
    const throttledAt = Date.now();
    started[0]?.fail(httpFailure(429, 'Too many requests', 200));
    await tick();
    const second = read('2'); // arrives during the pause: waits with the first
    await sleep(100);
    expect(started).toHaveLength(1);
    while (started.length < 2) await sleep(20);
    expect(started[1]?.keys).toEqual(['1', '2']);
    expect((started[1]?.at ?? 0) - throttledAt).toBeGreaterThanOrEqual(195);
    started[1]?.answer({ 1: order('1'), 2: order('2') });
    await Promise.all([first, second]);
    expect(paused).toHaveLength(1);
    expect(paused[0]).toBeCloseTo(0.2, 1);
  });

  it('fails callers at once, transient, when a pause outlasts what they may wait', async () => {
    const { read, started } = batched({ maxWaitMs: 100 });
    const first = read('1');
    await tick();
    started[0]?.fail(httpFailure(503, 'Service unavailable', 30_000));
    const err = await first.catch((e: unknown) => e);
    expect(String(err)).toMatch(/pause reads for 30 s/);
    expect(classify(err)).toBe('transient');
    await expect(read('2')).rejects.toThrow(/pause reads/);
    expect(started).toHaveLength(1);
  });

  it('stops waiting at once when the caller aborts', async () => {
    const { read } = batched();
    const controller = new AbortController();
    const pending = read('1', controller.signal);
    controller.abort();
    await expect(pending).rejects.toThrow(/shutting down/);
  });
});

describe('batched S/4HANA reads of two families on one destination', () => {
  it('offers a request that ends to the other family first, so a busy family never starves the other', async () => {
    const destination = createDestinationLimit({ maxConcurrent: 1 });
    const [orders, returns] = [controllableApi(), controllableApi()];
    const options = { ...defaults, batchSize: 1, destination };
    const [readOrder, readReturn] = [batchReads(orders.api, options), batchReads(returns.api, options)];
    const first = [readOrder('1'), readOrder('2')];
    await tick();
    const other = readReturn('R1');
    await tick();
    expect(orders.started.map((s) => s.keys)).toEqual([['1']]);
    expect(returns.started).toHaveLength(0); // the one request is the orders'

    orders.started[0]?.answer({ 1: order('1') });
    await first[0];
    await tick();
    // Order 2 has waited longer, but the request that ended was the orders' own: the returns go next.
    expect(returns.started.map((s) => s.keys)).toEqual([['R1']]);
    expect(orders.started).toHaveLength(1);
    returns.started[0]?.answer({ R1: order('R1') });
    await other;
    await tick();
    expect(orders.started.map((s) => s.keys)).toEqual([['1'], ['2']]);
    orders.started[1]?.answer({ 2: order('2') });
    await first[1];
  });
});

describe('batched S/4HANA reads while another request is in flight', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['performance', 'setTimeout', 'clearTimeout'] });
  });

  /** Reads whose latest request took `ms`: from then on a request waits a fifth of that while one is in flight. */
  async function afterRequestOf(ms: number, options: Partial<Options> = {}) {
    const { read, started } = batched(options);
    const pending = read('0');
    await tick();
    vi.advanceTimersByTime(ms);
    started[0]?.answer({ 0: order('0') });
    await pending;
    return { read, started };
  }

  /** Moves time on by `ms` and lets what it woke run. */
  async function pass(ms: number) {
    vi.advanceTimersByTime(ms);
    await tick();
  }

  it('holds a request until its first caller has waited a fifth of the latest request, gathering the callers that arrive meanwhile', async () => {
    const { read, started } = await afterRequestOf(50);
    const alone = read('1');
    await tick();
    expect(started.map((s) => s.keys)).toEqual([['0'], ['1']]); // nothing was in flight: at once
    const gathered = [read('2')];
    await pass(6);
    gathered.push(read('3'));
    await pass(3);
    expect(started).toHaveLength(2); // 9 ms of the 10 ms gather
    await pass(1);
    expect(started[2]?.keys).toEqual(['2', '3']);
    started[1]?.answer({ 1: order('1') });
    started[2]?.answer({ 2: order('2'), 3: order('3') });
    const answers = await Promise.all([alone, ...gathered]);
    expect(answers.map((r) => r.document?.salesOrder)).toEqual(['1', '2', '3']);
  });

  it('never holds a request when none is in flight, however slow the latest one was', async () => {
    const { read, started } = await afterRequestOf(5_000);
    const pending = read('1');
    await tick();
    expect(started[1]?.keys).toEqual(['1']);
    started[1]?.answer({ 1: order('1') });
    await pending;
  });

  it(`gathers for at most ${MAX_GATHER_MS} ms however slow S/4HANA is`, async () => {
    const { read, started } = await afterRequestOf(5_000);
    const busy = read('1');
    await tick();
    const gathered = read('2');
    await pass(MAX_GATHER_MS - 1);
    expect(started).toHaveLength(2);
    await pass(1);
    expect(started[2]?.keys).toEqual(['2']);
    started[1]?.answer({ 1: order('1') });
    started[2]?.answer({ 2: order('2') });
    await Promise.all([busy, gathered]);
  });

  it('sends a full request, or any after requests faster than 5 ms, at once', async () => {
    const { read, started } = await afterRequestOf(100, { batchSize: 2 });
    const reads = [read('1')];
    await tick();
    reads.push(read('2'), read('3')); // a full request: no gather
    await tick();
    expect(started.slice(1).map((s) => s.keys)).toEqual([['1'], ['2', '3']]);
    started[2]?.answer({ 2: order('2'), 3: order('3') });
    await pass(4);
    started[1]?.answer({ 1: order('1') }); // 4 ms: the gather would be under a millisecond
    reads.push(read('4'));
    await tick();
    reads.push(read('5'));
    await tick();
    expect(started.slice(3).map((s) => s.keys)).toEqual([['4'], ['5']]);
    started[3]?.answer({ 4: order('4') });
    started[4]?.answer({ 5: order('5') });
    await Promise.all(reads);
  });

  it('leaves an order being read out of a gathered request; its caller gets the read after, which sees the change', async () => {
    const { read, started } = await afterRequestOf(50);
    const before = read('1');
    await tick();
    const other = read('2');
    const after = read('1'); // arrives while order 1 is being read, during the gather
    await pass(10);
    expect(started.slice(1).map((s) => s.keys)).toEqual([['1'], ['2']]);
    started[1]?.answer({ 1: order('1', 'A') });
    expect((await before).document?.overallSDProcessStatus).toBe('A');
    await tick();
    expect(started[3]?.keys).toEqual(['1']); // waited through the gather already: at once
    started[3]?.answer({ 1: order('1', 'B') });
    started[2]?.answer({ 2: order('2') });
    expect((await after).document?.overallSDProcessStatus).toBe('B');
    await other;
  });
});
