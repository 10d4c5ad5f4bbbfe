// What the S/4HANA stand-in holds and how a test steers it: the orders, the read counts, the faults and the
// scripts of the next reads, apart from the HTTP that reads them.
import type { SalesOrderState, SandboxApi } from './s4Entities.js';

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

/** How a test steers the stand-in and sees what it was asked. */
export interface S4Controls {
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
}

export interface StoredOrder {
  state: SalesOrderState;
  createdMs: number;
}

export interface S4State {
  controls: S4Controls;
  order(salesOrder: string): StoredOrder | undefined;
  /** Every order held, for collection queries. */
  all(): StoredOrder[];
  /** Stores a checked state; an order keeps the creation time it has, a new one takes `createdMs`. */
  store(state: SalesOrderState, createdMs: number): void;
  /** Counts a read of the order and plays its script's next entry, if it has a script. */
  read(salesOrder: string): { callNo: number; entry: ScriptedRead | undefined };
  /** The fault `setFault` asks for on this read. */
  fault(salesOrder: string, callNo: number): S4Fault;
  log(request: LoggedRequest): void;
  latencyMs(): number;
  refusingFilters(): boolean;
  retryAfterSeconds(): number | undefined;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export function createS4State(initialLatencyMs: number): S4State {
  const orders = new Map<string, StoredOrder>();
  const counts = new Map<string, number>();
  const scripts = new Map<string, { reads: ScriptedRead[]; next: number }>();
  const requestLog: LoggedRequest[] = [];
  let total = 0;
  let latencyMs = initialLatencyMs;
  let faultFn: S4FaultFn | undefined;
  let refusingFilters = false;
  let retryAfterSeconds: number | undefined = 1;

  function store(state: SalesOrderState, createdMs: number): void {
    orders.set(state.salesOrder, { state, createdMs: orders.get(state.salesOrder)?.createdMs ?? createdMs });
  }

  function setOrder(state: SalesOrderState): void {
    checkOrder(state);
    store({ ...state }, Date.parse(state.lastChangeDateTime));
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

  const controls: S4Controls = {
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
  };

  return {
    controls,
    order: (salesOrder) => orders.get(salesOrder),
    all: () => [...orders.values()],
    store,
    read(salesOrder) {
      total += 1;
      const callNo = (counts.get(salesOrder) ?? 0) + 1;
      counts.set(salesOrder, callNo);
      return { callNo, entry: scripted(salesOrder) };
    },
    fault: (salesOrder, callNo) => faultFn?.(salesOrder, callNo) ?? 'ok',
    log(request) {
      requestLog.push(request);
    },
    latencyMs: () => latencyMs,
    refusingFilters: () => refusingFilters,
    retryAfterSeconds: () => retryAfterSeconds,
  };
}

/** Throws on a state S/4HANA could not hold: no key, or a date that is not one. */
export function checkOrder(state: SalesOrderState): void {
  if (!state.salesOrder) throw new Error('setOrder: salesOrder is required');
  if (Number.isNaN(Date.parse(state.lastChangeDateTime))) {
    throw new Error(`setOrder: lastChangeDateTime '${state.lastChangeDateTime}' is not an ISO instant`);
  }
  const date = state.requestedDeliveryDate;
  if (date != null && !(ISO_DATE.test(date) && !Number.isNaN(Date.parse(date)))) {
    throw new Error(`setOrder: requestedDeliveryDate '${date}' is not YYYY-MM-DD`);
  }
}
