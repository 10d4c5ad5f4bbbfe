/**
 * Stand-in for S/4HANA's sales-order APIs: `API_SALES_ORDER_SRV` (OData V2), entity set `A_SalesOrder`, and
 * `CE_SALESORDER_0001` (OData V4), entity set `SalesOrder`, both at once on their own paths.
 *
 * Integration tests, the crash suite, the benchmark and the embedded demo need a sales-order API they can
 * steer: set an order's state, make reads slow, fail or hang, script what each read of an order answers, and
 * count reads to prove a duplicate event did not cost a call. This is a real HTTP server (node:http, keep-alive, no per-request logging, since the
 * benchmark sends ~20k reads) that answers single-order reads and collection reads with a `$filter` of key terms
 * joined by `or`, in each version's JSON format (s4Entities.ts), with OData error bodies. It honours `$select`:
 * a release without `OverallDeliveryStatus` fails a request selecting it (docs/s4hana.md, V2 fields and releases).
 * Error codes other than SY/530 are plausible, not copied from a system: clients must key on the status.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type Answer,
  collectionAnswer,
  ENTITY_SETS,
  type Entity,
  entityAnswer,
  isAnswer,
  odataError,
  renderV2,
  renderV4,
  type SandboxApi,
  SERVICE_PATHS,
  select,
} from './s4Entities.js';

export interface SalesOrderState {
  salesOrder: string;
  soldToParty?: string;
  customerReference?: string;
  /** YYYY-MM-DD */
  requestedDeliveryDate?: string | null;
  /** ISO instant */
  lastChangeDateTime: string;
  overallSDProcessStatus?: string;
  overallDeliveryStatus?: string;
  overallTotalDeliveryStatus?: string;
  rejectionStatus?: string;
  deliveryBlockReason?: string;
  totalNetAmount?: string;
  currency?: string;
}

export type S4Fault = 'ok' | 'unavailable' | 'tooMany' | 'hang' | 'error500';
/** `callNo` is the 1-based number of this read for this sales order, counted since start. */
export type S4FaultFn = (salesOrder: string, callNo: number) => S4Fault;

/**
 * What one read of an order answers. A scripted `state` becomes the order's state from this read on, as if
 * S/4HANA had moved on just before the read; `latencyMs` replaces the server's latency for this read only;
 * `until` holds the answer (already rendered, so it shows the state as of the read) until the promise settles,
 * which lets a test order reads against other work without guessing durations. The client's timeout still
 * applies: a test that holds a read longer than `S4_TIMEOUT_MS` sees a timeout. In a collection read, the first
 * scripted fault decides the request, the longest latency delays it and every gate holds it.
 */
export interface ScriptedRead {
  state?: SalesOrderState;
  latencyMs?: number;
  fault?: S4Fault;
  until?: Promise<unknown>;
}

export interface LoggedRequest {
  /** Date.now() when the request arrived. */
  at: number;
  api: SandboxApi;
  /** A read of the entity set with `$filter`, not of one entity. */
  collection: boolean;
  salesOrders: string[];
  /** Answered 400 for its filter. */
  refused: boolean;
}

export interface S4ServerOptions {
  port?: number;
  host?: string;
  latencyMs?: number;
  /** Emulate an older release whose A_SalesOrder has no `OverallDeliveryStatus` property at all. */
  omitOverallDeliveryStatus?: boolean;
}

export interface S4Server {
  /** http://127.0.0.1:port, no trailing slash */
  url: string;
  setOrder(state: SalesOrderState): void;
  deleteOrder(salesOrder: string): void;
  getOrder(salesOrder: string): SalesOrderState | undefined;
  /**
   * Orders read (faulted and 404 ones included), in total or for one order: a collection read of three orders
   * counts one for each.
   */
  calls(salesOrder?: string): number;
  /** HTTP requests for sales orders received, single and collection reads, faulted ones included. */
  requests(): number;
  /** Every sales-order request in arrival order: when it came, which API, the orders it asked for. */
  requestLog(): ReadonlyArray<LoggedRequest>;
  /** Answer collection reads with 400, as a gateway that does not accept the `$filter` would. */
  refuseFilters(refuse: boolean): void;
  /** The `Retry-After` seconds sent with the `tooMany` fault (default 1; undefined sends none). */
  setRetryAfter(seconds: number | undefined): void;
  setLatency(ms: number): void;
  setFault(fault: S4FaultFn | undefined): void;
  /**
   * Scripts the next reads of one order: the k-th read from now answers `reads[k-1]`, and the last entry answers
   * every read after it. A scripted `fault` overrides `setFault`. An empty list removes the script.
   */
  scriptReads(salesOrder: string, reads: ScriptedRead[]): void;
  close(): Promise<void>;
}

// Both key forms are valid: A_SalesOrder('1') and A_SalesOrder(SalesOrder='1'); '' is an escaped quote.
const KEY_PREDICATE = /^\((?:SalesOrder=)?'((?:[^']|'')*)'\)$/;
const FILTER_TERM = /\s*SalesOrder eq '((?:[^']|'')*)'\s*/y;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Where people change the sandbox's orders by hand (local mode); outside both OData service paths. */
const CONTROL_PATH = '/orders/';
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

export async function startS4Server(options: S4ServerOptions = {}): Promise<S4Server> {
  const orders = new Map<string, { state: SalesOrderState; createdMs: number }>();
  const counts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let total = 0;
  let latencyMs = options.latencyMs ?? 0;
  let faultFn: S4FaultFn | undefined;
  const scripts = new Map<string, { reads: ScriptedRead[]; next: number }>();
  let refusingFilters = false;
  let retryAfterSeconds: number | undefined = 1;
  const requestLog: LoggedRequest[] = [];
  let url = '';

  function setOrder(state: SalesOrderState): void {
    check(state);
    const createdMs = orders.get(state.salesOrder)?.createdMs ?? Date.parse(state.lastChangeDateTime);
    orders.set(state.salesOrder, { state: { ...state }, createdMs });
  }

  /** The script's entry for this read of `salesOrder`, if it has one; its state becomes the order's. */
  function scripted(salesOrder: string): ScriptedRead | undefined {
    const script = scripts.get(salesOrder);
    if (script === undefined) return undefined;
    const entry = script.reads[Math.min(script.next, script.reads.length - 1)];
    script.next += 1;
    if (entry?.state !== undefined) setOrder({ ...entry.state, salesOrder });
    return entry;
  }

  /** How the answer to one request is held back: by latency, and by the gates of scripted reads. */
  interface Delay {
    latencyMs?: number;
    until: Array<Promise<unknown>>;
  }

  function read(req: IncomingMessage, delay: Delay): Answer | 'hang' {
    const [rawPath = '', rawQuery = ''] = (req.url ?? '').split('?', 2);
    const api: SandboxApi = rawPath.startsWith(SERVICE_PATHS.v4) ? 'v4' : 'v2';
    if (req.method !== 'GET') {
      return {
        ...odataError(api, 405, '/IWFND/CM_MGW/405', `Method ${req.method} not allowed`),
        headers: { allow: 'GET' },
      };
    }
    let path: string;
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      return odataError(api, 400, '/IWFND/CM_MGW/004', 'Malformed URI');
    }
    const query = new URLSearchParams(rawQuery);
    const set = ENTITY_SETS[api];
    let salesOrders: string[];
    let collection: boolean;
    if (path === set) {
      collection = true;
      const keys = parseFilter(query.get('$filter'));
      if (keys === undefined || refusingFilters) {
        requestLog.push({ at: Date.now(), api, collection, salesOrders: keys ?? [], refused: true });
        return odataError(api, 400, '/IWBEP/CM_MGW_RT/011', 'Invalid filter expression');
      }
      salesOrders = keys;
    } else if (path.startsWith(set)) {
      collection = false;
      const match = KEY_PREDICATE.exec(path.slice(set.length));
      // A_SalesOrder(…) with a lone quote means the client forgot to double it.
      if (!match) return odataError(api, 400, '/IWBEP/CM_MGW_RT/004', 'Invalid key predicate');
      salesOrders = [(match[1] ?? '').replaceAll("''", "'")];
    } else {
      const segment = path.split('/').pop() ?? '';
      return odataError(api, 404, '/IWFND/MED/170', `Resource not found for segment '${segment}'`);
    }

    requestLog.push({ at: Date.now(), api, collection, salesOrders, refused: false });
    let fault: S4Fault = 'ok';
    for (const salesOrder of salesOrders) {
      total += 1;
      const callNo = (counts.get(salesOrder) ?? 0) + 1;
      counts.set(salesOrder, callNo);
      const entry = scripted(salesOrder);
      if (entry?.latencyMs !== undefined) delay.latencyMs = Math.max(delay.latencyMs ?? 0, entry.latencyMs);
      if (entry?.until !== undefined) delay.until.push(entry.until);
      const own = entry?.fault ?? faultFn?.(salesOrder, callNo) ?? 'ok';
      if (fault === 'ok') fault = own; // the first order with a fault decides the whole request
    }
    switch (fault) {
      case 'hang':
        return 'hang';
      case 'unavailable':
        return odataError(api, 503, '/IWFND/CM_BEC/026', 'Service temporarily unavailable');
      case 'tooMany':
        return {
          ...odataError(api, 429, '/IWFND/CM_MGW/429', 'Too many requests'),
          headers: retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
        };
      case 'error500':
        return odataError(api, 500, '/IWBEP/CM_MGW_RT/000', 'Internal error in the backend');
      case 'ok':
        break;
    }

    const $select = query.get('$select');
    const entities: Entity[] = [];
    for (const salesOrder of collection ? [...new Set(salesOrders)] : salesOrders) {
      const order = orders.get(salesOrder);
      if (!order) continue;
      const entity =
        api === 'v2'
          ? renderV2(order.state, order.createdMs, url, options.omitOverallDeliveryStatus === true)
          : renderV4(order.state, order.createdMs);
      const selected = select(api, entity, $select);
      if (isAnswer(selected)) return selected;
      entities.push(selected);
    }
    if (collection) return collectionAnswer(api, entities, url);
    const [entity] = entities;
    const type = api === 'v2' ? 'A_SalesOrderType' : 'SalesOrder';
    if (!entity) return odataError(api, 404, 'SY/530', `Resource not found for segment '${type}'`);
    return entityAnswer(api, entity, url);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.url?.startsWith(CONTROL_PATH)) {
      void control(req, res);
      return;
    }
    let answer: Answer | 'hang';
    const delay: Delay = { until: [] };
    try {
      answer = read(req, delay);
    } catch (err) {
      // A throwing fault function is a test bug; surface it as a 500 instead of crashing the test process.
      answer = odataError('v2', 500, 'SANDBOX', `sandbox failed: ${String(err)}`);
    }
    // Leave the socket open: the client's timeout fires, or close() destroys it.
    if (answer === 'hang') return;
    const reply = answer;
    const delayMs = delay.latencyMs ?? latencyMs;
    const answerNow = () => {
      if (delayMs <= 0) {
        send(res, reply);
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        send(res, reply);
      }, delayMs);
      timers.add(timer);
    };
    if (delay.until.length === 0) answerNow();
    else Promise.allSettled(delay.until).then(answerNow);
  }

  /**
   * `GET /orders/<salesOrder>` shows an order's state; `PATCH /orders/<salesOrder>` with a JSON object of
   * SalesOrderState fields changes it (or creates it), as a user of S/4HANA would. `lastChangeDateTime` moves to
   * now unless the body sets it, so the service sees a newer state. For people trying the service locally.
   */
  async function control(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
    };
    const salesOrder = decodeURIComponent((req.url ?? '').slice(CONTROL_PATH.length).split('?')[0] ?? '');
    const current = orders.get(salesOrder)?.state;
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
      check(next);
    } catch (err) {
      reply(400, { error: (err as Error).message });
      return;
    }
    orders.set(salesOrder, { state: next, createdMs: orders.get(salesOrder)?.createdMs ?? Date.now() });
    reply(200, next);
  }

  const server = createServer(handle);
  // Outlive the clients' idle timeouts so a pooled socket is never closed under a request being sent.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1', backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    setOrder,
    deleteOrder(salesOrder) {
      orders.delete(salesOrder);
    },
    getOrder(salesOrder) {
      const order = orders.get(salesOrder);
      return order && { ...order.state };
    },
    calls: (salesOrder) => (salesOrder === undefined ? total : (counts.get(salesOrder) ?? 0)),
    setLatency(ms) {
      latencyMs = ms;
    },
    setFault(fn) {
      faultFn = fn;
    },
    scriptReads(salesOrder, reads) {
      if (reads.length === 0) scripts.delete(salesOrder);
      else scripts.set(salesOrder, { reads: [...reads], next: 0 });
    },
    requests: () => requestLog.length,
    requestLog: () => requestLog,
    refuseFilters(refuse) {
      refusingFilters = refuse;
    },
    setRetryAfter(seconds) {
      retryAfterSeconds = seconds;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        // Hung and keep-alive sockets would hold close() open forever.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function check(state: SalesOrderState): void {
  if (!state.salesOrder) throw new Error('setOrder: salesOrder is required');
  if (Number.isNaN(Date.parse(state.lastChangeDateTime))) {
    throw new Error(`setOrder: lastChangeDateTime '${state.lastChangeDateTime}' is not an ISO instant`);
  }
  const date = state.requestedDeliveryDate;
  if (date != null && !(ISO_DATE.test(date) && !Number.isNaN(Date.parse(date)))) {
    throw new Error(`setOrder: requestedDeliveryDate '${date}' is not YYYY-MM-DD`);
  }
}

/** The keys of `SalesOrder eq '…'` terms joined by `or`, or undefined for any other filter. */
function parseFilter(filter: string | null): string[] | undefined {
  if (filter === null) return undefined;
  const keys: string[] = [];
  let at = 0;
  for (;;) {
    FILTER_TERM.lastIndex = at;
    const match = FILTER_TERM.exec(filter);
    if (!match) return undefined;
    keys.push((match[1] ?? '').replaceAll("''", "'"));
    at = FILTER_TERM.lastIndex;
    if (at === filter.length) return keys;
    if (!filter.startsWith('or ', at)) return undefined;
    at += 3;
  }
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.destroyed) return;
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(answer.headers?.['odata-version'] === undefined ? { dataserviceversion: '2.0' } : {}),
    ...answer.headers,
  });
  res.end(body);
}
