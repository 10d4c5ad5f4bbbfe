import { describe, expect, it } from 'vitest';
import type { SalesOrder } from '../../src/s4/salesOrder.js';
import type { SalesOrderApi } from '../../src/s4/salesOrderApi.js';
import { shareReads } from '../../src/s4/sharedReads.js';

/** An API whose reads stay open until the test answers them, recording when each started. */
function controllableApi() {
  const started: Array<{
    salesOrder: string;
    answer: (order: SalesOrder | null) => void;
    fail: (err: Error) => void;
  }> = [];
  const api: SalesOrderApi = {
    read: (salesOrder) =>
      new Promise((resolve, reject) => started.push({ salesOrder, answer: resolve, fail: reject })),
  };
  return { api, started };
}

const order = (salesOrder: string, status: string) =>
  ({ salesOrder, overallSDProcessStatus: status }) as SalesOrder;
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('shared S/4HANA reads', () => {
  it('answers callers that arrived during a read with the next read, never the one already running', async () => {
    const { api, started } = controllableApi();
    const read = shareReads(api);
    const first = read('1');
    await tick();
    const second = read('1');
    const third = read('1');
    expect(started).toHaveLength(1);

    started[0]?.answer(order('1', 'A'));
    expect((await first).order?.overallSDProcessStatus).toBe('A');
    await tick();
    expect(started).toHaveLength(2); // one read for both waiting callers
    started[1]?.answer(order('1', 'B'));
    expect((await second).order?.overallSDProcessStatus).toBe('B');
    expect((await third).order?.overallSDProcessStatus).toBe('B');
  });

  it('reads different orders in parallel', async () => {
    const { api, started } = controllableApi();
    const read = shareReads(api);
    const a = read('1');
    const b = read('2');
    expect(started.map((s) => s.salesOrder)).toEqual(['1', '2']);
    started[1]?.answer(null);
    started[0]?.answer(order('1', 'A'));
    expect((await a).order?.salesOrder).toBe('1');
    expect((await b).order).toBeNull();
  });

  it('gives a failed read to every caller that shared it, and reads afresh afterwards', async () => {
    const { api, started } = controllableApi();
    const read = shareReads(api);
    const first = read('1');
    started[0]?.fail(new Error('503'));
    await expect(first).rejects.toThrow('503');
    const again = read('1');
    await tick();
    expect(started).toHaveLength(2);
    started[1]?.answer(order('1', 'A'));
    expect((await again).order?.overallSDProcessStatus).toBe('A');
  });

  it('stamps each result with the time its read was sent', async () => {
    const { api, started } = controllableApi();
    let now = 1000;
    const read = shareReads(api, () => new Date(now));
    const pending = read('1');
    now = 5000;
    started[0]?.answer(order('1', 'A'));
    expect((await pending).readAt.getTime()).toBe(1000);
  });
});
