// The outbound-delivery test family's S/4HANA and portal on one local HTTP server: the OData V2 entity set
// A_OutbDeliveryHeader of API_OUTBOUND_DELIVERY_SRV (an entity by its key, or the collection by a `$filter` of
// keys, as the shared reader asks), and the
// portal's `PUT /outbound-deliveries/<delivery>`, each request logged. The sandbox's stand-ins know orders and
// returns only.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DELIVERY_SET } from './outboundDelivery/services.js';

export interface Delivery {
  DeliveryDocument: string;
  /** A not yet, B partly, C completely issued. */
  OverallGoodsMovementStatus: string;
  SoldToParty: string;
  changedAt: Date;
}

export interface DeliveryPut {
  delivery: string;
  idempotencyKey: string | undefined;
  body: unknown;
  status: number;
}

export interface DeliveryServer {
  url: string;
  set(delivery: Delivery): void;
  /** Every read of `delivery` answers 503 while true. */
  unavailable(delivery: string, down: boolean): void;
  /** Every PUT of `delivery` answers 400 while true. */
  refusePut(delivery: string, refuse: boolean): void;
  puts(delivery: string): DeliveryPut[];
  close(): Promise<void>;
}

export async function startDeliveryServer(): Promise<DeliveryServer> {
  const deliveries = new Map<string, Delivery>();
  const down = new Set<string>();
  const refused = new Set<string>();
  const puts: DeliveryPut[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const put = /^\/outbound-deliveries\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'PUT' && put !== null) {
        const delivery = decodeURIComponent(put[1] as string);
        const status = refused.has(delivery) ? 400 : 200;
        const key = req.headers['idempotency-key'];
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        puts.push({ delivery, idempotencyKey: Array.isArray(key) ? key[0] : key, body, status });
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      // One key is read as an entity, several as the collection filtered by their keys.
      const single = url.pathname.startsWith(`${DELIVERY_SET}(`)
        ? /^\('((?:[^']|'')*)'\)$/.exec(decodeURIComponent(url.pathname.slice(DELIVERY_SET.length)))
        : null;
      if (req.method !== 'GET' || (url.pathname !== DELIVERY_SET && single === null)) {
        res.writeHead(404).end();
        return;
      }
      const keys = (
        single === null
          ? [...(url.searchParams.get('$filter') ?? '').matchAll(/'((?:[^']|'')*)'/g)].map(
              (match) => match[1],
            )
          : [single[1]]
      ).map((key) => (key as string).replaceAll("''", "'"));
      if (keys.some((key) => down.has(key))) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: { lang: 'en', value: 'Service unavailable' } } }));
        return;
      }
      const results = keys.flatMap((key) => {
        const found = deliveries.get(key);
        if (found === undefined) return [];
        const { changedAt, ...entity } = found;
        return [{ ...entity, LastChangeDate: `/Date(${changedAt.getTime()})/` }];
      });
      if (single === null) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ d: { results } }));
      } else if (results[0] === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: { lang: 'en', value: 'Resource not found' } } }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ d: results[0] }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    set: (delivery) => deliveries.set(delivery.DeliveryDocument, delivery),
    unavailable: (delivery, isDown) => (isDown ? down.add(delivery) : down.delete(delivery)),
    refusePut: (delivery, refuse) => (refuse ? refused.add(delivery) : refused.delete(delivery)),
    puts: (delivery) => puts.filter((request) => request.delivery === delivery),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
