import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import { createSalesOrderApi } from '../../src/families/salesOrder/api.js';
import type { ReconcileCollection } from '../../src/reconcile/collection.js';
import { createCollectionReader, type ReadPage } from '../../src/reconcile/collectionReader.js';
import { createReconcileRequests } from '../../src/reconcile/reconcileRequests.js';
import { batchReads } from '../../src/s4/batchedReads.js';
import { createDestinationLimit, type DestinationLimit } from '../../src/s4/destinationLimit.js';
import type { ApiVersion } from '../../src/s4/odataService.js';
import { registerDestination } from '../support/destination.js';
import { gate } from '../support/gate.js';
import { customerReturns, salesOrders } from '../support/reconcileCollections.js';
import { eventually } from '../support/waits.js';

const VERSIONS: ApiVersion[] = ['v2', 'v4'];
const STAMP = '2026-12-01T10:00:00.1234567Z';

async function all<T>(pages: AsyncGenerator<ReadPage<T>>): Promise<Array<ReadPage<T>>> {
  const read: Array<ReadPage<T>> = [];
  for await (const page of pages) read.push(page);
  return read;
}

/** A destination limit that remembers the most requests it saw in flight at once. */
function watchedLimit(maxConcurrent: number): DestinationLimit & { most: () => number } {
  const limit = createDestinationLimit({ maxConcurrent });
  let most = 0;
  return {
    ...limit,
    started() {
      limit.started();
      most = Math.max(most, limit.inFlight());
    },
    most: () => most,
  };
}

describe('the collection reader', () => {
  let s4: S4Server;
  let destination: string;
  const reader = (pageSize: number, limit: DestinationLimit = createDestinationLimit({ maxConcurrent: 4 })) =>
    createCollectionReader(createReconcileRequests({ destination, timeoutMs: 5000, limit }), pageSize);

  beforeAll(async () => {
    s4 = await startS4Server();
    destination = registerDestination(s4.url);
  });

  afterAll(async () => {
    await s4.close();
  });

  beforeEach(() => {
    for (const order of ['1', '2', '3', '4', '5', '6', '7', '8', '9']) s4.deleteOrder(order);
    s4.setPageSize(undefined);
    s4.setCollectionFault(undefined);
    s4.setRetryAfter(1);
    s4.setLatency(0);
  });

  for (const version of VERSIONS) {
    it(`reads more rows than a page that share one stamp once each, in stamp and key order (${version})`, async () => {
      for (const order of ['1', '2', '3', '4', '5', '6', '7'])
        s4.setOrder({ salesOrder: order, lastChangeDateTime: STAMP });
      // Same millisecond in V2's JSON, apart only in the digits below it.
      s4.setOrder({ salesOrder: '8', lastChangeDateTime: '2026-12-01T10:00:00.1234000Z' });
      s4.setOrder({ salesOrder: '9', lastChangeDateTime: '2026-12-01T10:00:00.1234999Z' });
      const before = s4.collectionLog().length;
      const pages = await all(reader(3).window(salesOrders(version), '2026-12-01T10:00:00.0000000Z'));
      const rows = pages.flatMap((page) => page.rows);
      expect(rows.map((row) => [row.key, row.stamp])).toEqual([
        ['8', '2026-12-01T10:00:00.1234000Z'],
        ...['1', '2', '3', '4', '5', '6', '7'].map((order) => [order, STAMP]),
        ['9', '2026-12-01T10:00:00.1234999Z'],
      ]);
      expect(rows[0]?.value).toMatchObject({ salesOrder: '8', overallSDProcessStatus: 'A' });
      // Three full pages, then the empty one that ends the window.
      expect(pages.map((page) => page.rows.length)).toEqual([3, 3, 3, 0]);
      const asked = s4
        .collectionLog()
        .slice(before)
        .map((query) => new URLSearchParams(query.query));
      expect(asked).toHaveLength(4);
      const literal = version === 'v2' ? `datetimeoffset'${STAMP}'` : STAMP;
      expect(asked[2]?.get('$filter')).toBe(
        `(LastChangeDateTime gt ${literal}) or (LastChangeDateTime eq ${literal} and SalesOrder gt '5')`,
      );
      expect(asked.every((query) => query.get('$top') === '3' && !query.has('$skip'))).toBe(true);
    });

    it(`follows the server's next links to the end of each page (${version})`, async () => {
      for (const order of ['1', '2', '3', '4', '5']) {
        s4.setOrder({ salesOrder: order, lastChangeDateTime: `2026-12-01T10:00:0${order}.0000001Z` });
      }
      s4.setPageSize(2);
      const pages = await all(reader(4).window(salesOrders(version), '2026-12-01T10:00:00.0000000Z'));
      expect(pages.map((page) => page.rows.map((row) => row.key))).toEqual([['1', '2', '3', '4'], ['5'], []]);
      expect(pages.map((page) => page.requests)).toEqual([2, 1, 1]);
    });

    it(`reads customer returns with their items, and only the open ones in a sweep (${version})`, async () => {
      s4.returns.setReturn({
        customerReturn: '60000001',
        lastChangeDateTime: STAMP,
        items: [{ customerReturnItem: '10', returnReason: '101' }],
      });
      s4.returns.setReturn({
        customerReturn: '60000002',
        lastChangeDateTime: STAMP,
        overallSDProcessStatus: 'C',
      });
      s4.returns.setReturn({ customerReturn: '60000003', lastChangeDateTime: STAMP, rejectionStatus: 'C' });
      s4.returns.setReturn({
        customerReturn: '60000004',
        lastChangeDateTime: STAMP,
        overallSDProcessStatus: 'B',
      });
      const collection: ReconcileCollection<{ items: unknown[] }> = customerReturns(version);
      const open = (await all(reader(1).open(collection))).flatMap((page) => page.rows);
      expect(open.map((row) => row.key)).toEqual(['60000001', '60000004']);
      expect(open[0]?.value.items).toEqual([
        expect.objectContaining({ customerReturnItem: '10', returnReason: '101' }),
      ]);
      const window = (await all(reader(10).window(collection, STAMP))).flatMap((page) => page.rows);
      expect(window.map((row) => row.key)).toEqual(['60000001', '60000002', '60000003', '60000004']);
    });
  }

  it('costs one request for a quiet window', async () => {
    s4.setOrder({ salesOrder: '1', lastChangeDateTime: '2026-12-01T09:00:00Z' });
    const pages = await all(reader(200).window(salesOrders('v2'), STAMP));
    expect(pages).toEqual([{ rows: [], requests: 1 }]);
  });

  it('waits out a 429 with Retry-After, pausing the destination for event reads too, and asks again', async () => {
    s4.setOrder({ salesOrder: '1', lastChangeDateTime: STAMP });
    const start = s4.collectionLog().length;
    s4.setCollectionFault((query) => (query.n === start + 1 ? 'tooMany' : 'ok'));
    const limit = createDestinationLimit({ maxConcurrent: 4 });
    const started = Date.now();
    const pages = await all(reader(200, limit).window(salesOrders('v4'), STAMP));
    expect(pages[0]).toEqual({ rows: [expect.objectContaining({ key: '1' })], requests: 2 });
    expect(limit.pausedUntil()).toBeGreaterThanOrEqual(started + 1000);
    expect(Date.now()).toBeGreaterThanOrEqual(limit.pausedUntil());
  });

  it('fails the read on a 500, and on a 429 without Retry-After', async () => {
    s4.setOrder({ salesOrder: '1', lastChangeDateTime: STAMP });
    s4.setCollectionFault(() => 'error500');
    await expect(all(reader(200).window(salesOrders('v2'), STAMP))).rejects.toMatchObject({ status: 500 });
    s4.setRetryAfter(undefined);
    s4.setCollectionFault(() => 'tooMany');
    await expect(all(reader(200).window(salesOrders('v2'), STAMP))).rejects.toMatchObject({ status: 429 });
  });

  it('sends one request at a time per destination, and only into a place event reads left free', async () => {
    for (const order of ['1', '2', '3']) s4.setOrder({ salesOrder: order, lastChangeDateTime: STAMP });
    s4.setLatency(20);
    const limit = watchedLimit(4);
    const read = reader(1, limit);
    await Promise.all([
      all(read.window(salesOrders('v2'), STAMP)),
      all(read.window(salesOrders('v2'), STAMP)),
      all(read.open(salesOrders('v2'))),
    ]);
    expect(limit.most()).toBe(1);

    const full = createDestinationLimit({ maxConcurrent: 1 });
    const eventRead = { wake: () => {}, expire: () => {} };
    full.join(eventRead);
    full.started();
    let done = false;
    const waiting = all(reader(10, full).window(salesOrders('v2'), STAMP)).then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(done).toBe(false);
    full.ended(eventRead);
    await waiting;
    expect(done).toBe(true);
  });

  it('finds documents by key and names those S/4HANA no longer has', async () => {
    s4.setOrder({ salesOrder: '1', lastChangeDateTime: STAMP });
    const found = await reader(200).keys(salesOrders('v4'), ['1', '2']);
    expect(found).toMatchObject({
      rows: [expect.objectContaining({ key: '1' })],
      missing: ['2'],
      requests: 1,
    });
  });

  it('fails rather than loops when the server hands the same rows back for the next page', async () => {
    // A server that ignores $filter: every page is the same two orders of one stamp.
    const server = createServer((_req, res) => {
      const value = ['1', '2'].map((order) => ({ SalesOrder: order, LastChangeDateTime: STAMP }));
      res
        .writeHead(200, { 'content-type': 'application/json', 'odata-version': '4.0' })
        .end(JSON.stringify({ value }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const requests = createReconcileRequests({
        destination: registerDestination(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        timeoutMs: 5000,
        limit: createDestinationLimit({ maxConcurrent: 4 }),
      });
      const read = createCollectionReader(requests, 2);
      await expect(all(read.window(salesOrders('v4'), STAMP))).rejects.toThrow(/ignored the key filter/);
      await expect(all(read.open(salesOrders('v4')))).rejects.toThrow(/ignored the key filter/);
    } finally {
      server.close();
    }
  });

  it('leaves a place that frees to an event read waiting for it, and takes the next one', async () => {
    for (const order of ['1', '2', '3']) s4.setOrder({ salesOrder: order, lastChangeDateTime: STAMP });
    const held = gate();
    s4.scriptReads('1', [{ until: held.opened }]);
    const shared = createDestinationLimit({ maxConcurrent: 1 });
    // Two views of one limit: each names who took a place, and who found none.
    const places: string[] = [];
    const refused = new Set<string>();
    const view = (who: string): DestinationLimit => ({
      ...shared,
      hasRoom() {
        const room = shared.hasRoom();
        if (!room) refused.add(who);
        return room;
      },
      started() {
        places.push(who);
        shared.started();
      },
    });
    const eventRead = batchReads(createSalesOrderApi({ destination, timeoutMs: 5000, version: 'v2' }), {
      destination: view('event'),
      batchSize: 1,
      maxWaitMs: 10_000,
      logger: { warn() {} },
    });
    const first = eventRead('1');
    await eventually('the first event read in flight', async () => shared.inFlight() === 1);
    const reconciled = all(reader(10, view('reconcile')).window(salesOrders('v2'), STAMP));
    await eventually('reconciliation waiting for a place', async () => refused.has('reconcile'));
    const second = eventRead('2');
    await eventually('the second event read waiting for a place', async () => refused.has('event'));
    held.open();
    await Promise.all([first, second, reconciled]);
    expect(places).toEqual(['event', 'event', 'reconcile', 'reconcile']);
  });
});
