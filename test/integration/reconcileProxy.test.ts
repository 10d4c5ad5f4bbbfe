// A destination behind a proxy (as the Cloud Connector puts an on-premise system) is read through the SAP Cloud
// SDK's request path: the SDK takes `http_proxy` for such a destination when it runs outside Cloud Foundry.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import { createCollectionReader, type ReadPage } from '../../src/reconcile/collectionReader.js';
import { createReconcileRequests } from '../../src/reconcile/reconcileRequests.js';
import { createDestinationLimit } from '../../src/s4/destinationLimit.js';
import { registerDestination } from '../support/destination.js';
import { salesOrders } from '../support/reconcileCollections.js';

const STAMP = '2026-12-01T10:00:00.1234567Z';

/** A forward proxy that remembers the URLs it was asked for. */
async function startProxy(): Promise<{ server: Server; url: string; asked: string[] }> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    asked.push(req.url ?? '');
    const forward = request(req.url ?? '', { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}

describe('reconciliation through a proxied destination', () => {
  let s4: S4Server;
  let proxy: Awaited<ReturnType<typeof startProxy>>;

  beforeAll(async () => {
    s4 = await startS4Server();
    proxy = await startProxy();
    process.env.http_proxy = proxy.url;
  });

  afterAll(async () => {
    delete process.env.http_proxy;
    proxy.server.closeAllConnections();
    await new Promise((resolve) => proxy.server.close(resolve));
    await s4.close();
  });

  it('reads pages and follows next links through the SDK', async () => {
    for (const order of ['1', '2', '3']) s4.setOrder({ salesOrder: order, lastChangeDateTime: STAMP });
    s4.setPageSize(2);
    const requests = createReconcileRequests({
      destination: registerDestination(s4.url),
      timeoutMs: 5000,
      limit: createDestinationLimit({ maxConcurrent: 4 }),
    });
    const pages: Array<ReadPage<unknown>> = [];
    for await (const page of createCollectionReader(requests, 10).window(salesOrders('v2'), STAMP))
      pages.push(page);
    expect(pages.map((page) => page.rows.map((row) => row.key))).toEqual([['1', '2', '3'], []]);
    expect(proxy.asked).toHaveLength(3);
    expect(proxy.asked[1]).toContain('$skiptoken=2');
    expect(
      proxy.asked.every((url) =>
        url.startsWith(`${s4.url}/sap/opu/odata/sap/API_SALES_ORDER_SRV/A_SalesOrder?`),
      ),
    ).toBe(true);
  });
});
