// The S/4HANA stand-in's order endpoint, where people trying the service locally change orders by hand.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SalesOrderState } from './s4Entities.js';
import { checkOrder, type S4State } from './s4State.js';

/** Outside both OData service paths. */
export const CONTROL_PATH = '/orders/';

const STATE_FIELDS: ReadonlySet<string> = new Set<keyof SalesOrderState>([
  'soldToParty',
  'customerReference',
  'requestedDeliveryDate',
  'lastChangeDateTime',
  'overallSDProcessStatus',
  'overallDeliveryStatus',
  'overallTotalDeliveryStatus',
  'rejectionStatus',
  'deliveryBlockReason',
  'totalNetAmount',
  'currency',
]);

/**
 * `GET /orders/<salesOrder>` shows an order's state; `PATCH /orders/<salesOrder>` with a JSON object of
 * SalesOrderState fields changes it (or creates it), as a user of S/4HANA would. `lastChangeDateTime` moves to
 * now unless the body sets it, so the service sees a newer state.
 */
export async function controlOrder(req: IncomingMessage, res: ServerResponse, state: S4State): Promise<void> {
  const reply = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
  };
  const salesOrder = decodeURIComponent((req.url ?? '').slice(CONTROL_PATH.length).split('?')[0] ?? '');
  const current = state.order(salesOrder)?.state;
  if (req.method === 'GET') {
    if (current) reply(200, current);
    else reply(404, { error: `no sales order ${salesOrder}` });
    return;
  }
  if (req.method !== 'PATCH') {
    res.setHeader('allow', 'GET, PATCH');
    reply(405, { error: 'use GET or PATCH' });
    return;
  }
  let changes: unknown;
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    changes = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    reply(400, { error: 'the body must be a JSON object of sales order fields' });
    return;
  }
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) {
    reply(400, { error: 'the body must be a JSON object of sales order fields' });
    return;
  }
  const wrong = Object.entries(changes).filter(
    ([key, value]) =>
      !STATE_FIELDS.has(key) ||
      !(typeof value === 'string' || (value === null && key === 'requestedDeliveryDate')),
  );
  if (wrong.length > 0) {
    reply(400, {
      error: `not a text field of a sales order: ${wrong.map(([key]) => key).join(', ')}`,
      fields: [...STATE_FIELDS],
    });
    return;
  }
  const next = {
    ...current,
    lastChangeDateTime: new Date().toISOString(),
    ...(changes as Partial<SalesOrderState>),
    salesOrder,
  };
  try {
    checkOrder(next);
  } catch (err) {
    reply(400, { error: (err as Error).message });
    return;
  }
  state.store(next, Date.now());
  reply(200, next);
}
