// Both families' S/4HANA reads on the one destination, each with its own batching and one limit between them, as
// the composition root wires them: never more requests in flight than the limit, whichever family sends them, and
// a pause that one family's read is told of holds the other family's reads too. A relay in front of the stand-in
// counts the requests in flight through it and logs when each arrived.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import { createCustomerReturnApi } from '../../src/families/customerReturn/api.js';
import { createSalesOrderApi } from '../../src/families/salesOrder/api.js';
import { batchReads } from '../../src/s4/batchedReads.js';
import { createDestinationLimit } from '../../src/s4/destinationLimit.js';
import { registerDestination } from '../support/destination.js';
import { gate } from '../support/gate.js';
import { guardedLogger } from '../support/logGuard.js';
import { orderMaker } from '../support/orders.js';
import { returnState } from '../support/returns.js';

type FamilyName = 'salesOrder' | 'customerReturn';

interface Relayed {
  family: FamilyName;
  /** Date.now() when the request reached the relay. */
  at: number;
  status: number;
}

/** An HTTP relay to `target` that counts the requests in flight through it: the most at once, and each one. */
async function startCountingRelay(target: string) {
  let inFlight = 0;
  let most = 0;
  const relayed: Relayed[] = [];
  const server = createServer((req, res) => {
    const at = Date.now();
    inFlight += 1;
    most = Math.max(most, inFlight);
    const upstream = request(`${target}${req.url}`, { headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        // Counted out before the reader can see the answer: a request it sends next is never counted with it.
        inFlight -= 1;
        const status = answer.statusCode ?? 502;
        relayed.push({
          family: /customerreturn/i.test(req.url ?? '') ? 'customerReturn' : 'salesOrder',
          at,
          status,
        });
        res.writeHead(status, answer.headers).end(Buffer.concat(chunks));
      });
    });
    upstream.on('error', (err) => res.destroy(err));
    upstream.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    most: () => most,
    relayed: () => relayed,
    reset() {
      most = 0;
      relayed.length = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let s4: S4Server;
let relay: Awaited<ReturnType<typeof startCountingRelay>>;
let destination: string;

beforeAll(async () => {
  s4 = await startS4Server({ latencyMs: 50 });
  relay = await startCountingRelay(s4.url);
  destination = registerDestination(relay.url);
});
afterAll(async () => {
  await relay.close();
  await s4.close();
});
beforeEach(() => {
  relay.reset();
  s4.setFault(undefined);
  s4.returns.setFault(undefined);
});

const { newOrder } = orderMaker(() => s4, 6_300_000);
let nextReturn = 63_000_000;
function newReturn(): string {
  const customerReturn = String(nextReturn++);
  s4.returns.setReturn(returnState(customerReturn));
  return customerReturn;
}

/**
 * Both families' batched reads on one destination limit of `maxConcurrent`, one key per request, so that each
 * read is a request of its own; `onPause` sees the destination's pauses.
 */
function readers(maxConcurrent: number, onPause?: (seconds: number) => void) {
  const settings = { destination, timeoutMs: 5000, version: 'v2' as const };
  const limit = createDestinationLimit({ maxConcurrent, onPause });
  const options = { destination: limit, batchSize: 1, maxWaitMs: 10_000, logger: guardedLogger() };
  return {
    salesOrder: batchReads(createSalesOrderApi(settings), options),
    customerReturn: batchReads(createCustomerReturnApi(settings), options),
  };
}

describe('S/4HANA reads of both families on one destination', () => {
  it('never has more requests in flight than the limit, however many each family sends', async () => {
    const read = readers(2);
    const orders = Array.from({ length: 6 }, () => newOrder());
    const returns = Array.from({ length: 6 }, () => newReturn());

    const answers = await Promise.all([
      ...orders.map((salesOrder) => read.salesOrder(salesOrder)),
      ...returns.map((customerReturn) => read.customerReturn(customerReturn)),
    ]);

    expect(answers.map((answer) => answer.document !== null)).toEqual(Array(12).fill(true));
    const families = relay.relayed().map((request) => request.family);
    expect(families.filter((family) => family === 'salesOrder')).toHaveLength(6);
    expect(families.filter((family) => family === 'customerReturn')).toHaveLength(6);
    // Both families were sending at once, and together they kept to the one limit.
    expect(relay.most()).toBe(2);
  });

  it.each<[FamilyName, FamilyName]>([
    ['salesOrder', 'customerReturn'],
    ['customerReturn', 'salesOrder'],
  ])(
    'holds the next read of the other family while a 429 to a %s read pauses the destination',
    async (throttled, other) => {
      const paused = gate();
      let pausedAt = 0;
      const read = readers(2, () => {
        pausedAt = Date.now();
        paused.open();
      });
      const keys = { salesOrder: newOrder(), customerReturn: newReturn() };
      // The stand-in answers its first read with 429 and Retry-After: 1.
      const once = (key: string, callNo: number) =>
        key === keys[throttled] && callNo === 1 ? 'tooMany' : 'ok';
      if (throttled === 'salesOrder') s4.setFault(once);
      else s4.returns.setFault(once);

      const throttledRead = read[throttled](keys[throttled]);
      await paused.opened;
      const otherRead = await read[other](keys[other]);
      expect(otherRead.document).not.toBeNull();
      expect((await throttledRead).document).not.toBeNull();

      const [first, ...after] = relay.relayed();
      expect(first).toMatchObject({ family: throttled, status: 429 });
      expect(after.map((request) => request.family).sort()).toEqual([other, throttled].sort());
      // The pause began when the 429 was seen; every read after it waited for its end.
      for (const request of after) expect(request.at - pausedAt).toBeGreaterThanOrEqual(990);
    },
  );
});
