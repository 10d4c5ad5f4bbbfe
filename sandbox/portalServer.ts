/**
 * Stand-in for the fleet portal's HTTP API: `PUT /orders/<salesOrder>` with the JSON body of the push contract
 * stores the order's latest state, and `GET /orders` lists what it holds; `PUT /warranty-cases/<customerReturn>`
 * does the same for warranty cases (caseState, caseRequests), with the same answers. Like a careful portal it refuses a state
 * older than the one it holds (409) and answers a repeated Idempotency-Key as it answered the first time.
 *
 * Tests, the crash suite, the benchmark and the demo steer it: the next answers of an order (or of any order) can
 * be 503 (with Retry-After), a hang (no answer until the client gives up), 409 or 400, and every request is logged
 * with its key, body and answer, so a test can prove one PUT per state and no older state after a newer one.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WarrantyCaseBody } from '../src/families/customerReturn/pushResource.js';
import type { PortalBody } from '../src/families/salesOrder/pushResource.js';

/** The body of a push, as the contract states it. */
export type PortalState = PortalBody;

export type PortalFault = 'unavailable' | 'hang' | 'conflict' | 'badRequest';

export type PortalFaultFn = (salesOrder: string, callNo: number) => PortalFault | undefined;

export interface PortalRequest<Body = PortalState> {
  /** Date.now() when the request arrived. */
  at: number;
  /** The key in the path: the sales order (or, of a case's request, the customer return). */
  salesOrder: string;
  idempotencyKey: string | undefined;
  contentType: string | undefined;
  body: Body | undefined;
  /** The status answered; 0 for a request left hanging. */
  status: number;
  /** The key was seen before: a retry of the same push. */
  repeated: boolean;
}

export interface PortalServer {
  url: string;
  /** The latest state accepted for each order. */
  state(salesOrder: string): PortalState | undefined;
  states(): Map<string, PortalState>;
  /** Every PUT received, in arrival order. */
  requests(salesOrder?: string): PortalRequest[];
  /** The next `times` PUTs of `salesOrder` (or of any order, without it) answer with `fault`. */
  failNext(fault: PortalFault, times?: number, salesOrder?: string): void;
  /** Every PUT of `salesOrder` answers `fault` until cleared with undefined. */
  failAlways(salesOrder: string, fault: PortalFault | undefined): void;
  /** Decides a fault for every PUT (`callNo`: 1-based, per order); undefined answers normally. */
  setFault(fn: PortalFaultFn | undefined): void;
  /** The latest state accepted for a warranty case. */
  caseState(customerReturn: string): WarrantyCaseBody | undefined;
  /** Every PUT of warranty cases (of one, if given), in arrival order. */
  caseRequests(customerReturn?: string): Array<PortalRequest<WarrantyCaseBody>>;
  close(): Promise<void>;
}

const FAULT_STATUS: Record<Exclude<PortalFault, 'hang'>, number> = {
  unavailable: 503,
  conflict: 409,
  badRequest: 400,
};

export async function startPortalServer(
  options: { port?: number; host?: string } = {},
): Promise<PortalServer> {
  const held = new Map<string, PortalState>();
  const log: PortalRequest[] = [];
  const heldCases = new Map<string, WarrantyCaseBody>();
  const caseLog: Array<PortalRequest<WarrantyCaseBody>> = [];
  const answered = new Map<string, number>();
  const once: Array<{ fault: PortalFault; left: number; salesOrder: string | undefined }> = [];
  const always = new Map<string, PortalFault>();
  const calls = new Map<string, number>();
  let faultFn: PortalFaultFn | undefined;

  function faultFor(salesOrder: string): PortalFault | undefined {
    const callNo = (calls.get(salesOrder) ?? 0) + 1;
    calls.set(salesOrder, callNo);
    const drawn = faultFn?.(salesOrder, callNo);
    if (drawn !== undefined) return drawn;
    const standing = always.get(salesOrder);
    if (standing !== undefined) return standing;
    const next = once.find((rule) => rule.left > 0 && (rule.salesOrder ?? salesOrder) === salesOrder);
    if (next === undefined) return undefined;
    next.left--;
    return next.fault;
  }

  function answer(req: IncomingMessage, res: ServerResponse, text: string): void {
    const match = /^\/(orders|warranty-cases)\/([^/?]+)$/.exec(req.url ?? '');
    if (req.method === 'GET' && req.url === '/orders') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([...held.values()]));
      return;
    }
    if (req.method !== 'PUT' || match === null) {
      res.writeHead(404).end();
      return;
    }
    const cases = match[1] === 'warranty-cases';
    const salesOrder = decodeURIComponent(match[2] as string);
    const key = req.headers['idempotency-key'];
    const idempotencyKey = Array.isArray(key) ? key[0] : key;
    let body: PortalState | undefined;
    try {
      body = JSON.parse(text) as PortalState;
    } catch {
      body = undefined;
    }
    const entry: PortalRequest = {
      at: Date.now(),
      salesOrder,
      idempotencyKey,
      contentType: req.headers['content-type'],
      body,
      status: 0,
      repeated: idempotencyKey !== undefined && answered.has(idempotencyKey),
    };
    if (cases) caseLog.push(entry as unknown as PortalRequest<WarrantyCaseBody>);
    else log.push(entry);
    const fault = faultFor(salesOrder);
    // A hang: the client's timeout fires, or close() destroys the socket.
    if (fault === 'hang') return;
    const reply = cases
      ? decide(
          heldCases,
          salesOrder,
          idempotencyKey,
          body as unknown as WarrantyCaseBody,
          fault,
          'customerReturn',
        )
      : decide(held, salesOrder, idempotencyKey, body, fault, 'salesOrder');
    entry.status = reply.status;
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(reply.body);
  }

  /** The answer to a PUT of `key` into `store`, whose bodies name their key in `keyField`. */
  function decide<Body extends { s4ChangedAt: string | null }>(
    store: Map<string, Body>,
    salesOrder: string,
    idempotencyKey: string | undefined,
    body: Body | undefined,
    fault: Exclude<PortalFault, 'hang'> | undefined,
    keyField: keyof Body,
  ): { status: number; headers?: Record<string, string>; body?: string } {
    if (fault === 'unavailable')
      return { status: 503, headers: { 'retry-after': '1' }, body: '{"error":"maintenance"}' };
    if (fault !== undefined) return { status: FAULT_STATUS[fault], body: `{"error":"${fault}"}` };
    const previous = idempotencyKey === undefined ? undefined : answered.get(idempotencyKey);
    if (previous !== undefined) return { status: previous };
    if (body === undefined || body[keyField] !== salesOrder || idempotencyKey === undefined)
      return {
        status: 400,
        body: '{"error":"a JSON body of this order and an Idempotency-Key are required"}',
      };
    const current = store.get(salesOrder);
    const status =
      current !== undefined && (body.s4ChangedAt ?? '') < (current.s4ChangedAt ?? '') ? 409 : 200;
    if (status === 200) store.set(salesOrder, body);
    answered.set(idempotencyKey, status);
    return { status };
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => answer(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    state: (salesOrder) => held.get(salesOrder),
    states: () => new Map(held),
    requests: (salesOrder) =>
      log.filter((entry) => salesOrder === undefined || entry.salesOrder === salesOrder),
    failNext(fault, times = 1, salesOrder) {
      once.push({ fault, left: times, salesOrder });
    },
    setFault(fn) {
      faultFn = fn;
    },
    caseState: (customerReturn) => heldCases.get(customerReturn),
    caseRequests: (customerReturn) =>
      caseLog.filter((entry) => customerReturn === undefined || entry.salesOrder === customerReturn),
    failAlways(salesOrder, fault) {
      if (fault === undefined) always.delete(salesOrder);
      else always.set(salesOrder, fault);
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
