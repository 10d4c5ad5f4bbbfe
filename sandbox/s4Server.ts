/**
 * Stand-in for S/4HANA's `API_SALES_ORDER_SRV` (OData V2), entity `A_SalesOrder`.
 *
 * Integration tests, the crash suite, the benchmark and the embedded demo need a sales-order API they can
 * steer: set an order's state, make reads slow, fail or hang, and count reads to prove a duplicate event
 * did not cost a call. This is a real HTTP server (node:http, keep-alive, no per-request logging, since the
 * benchmark sends ~20k reads) that answers single-order reads in the gateway's V2 JSON format:
 * `{"d": …}` with `__metadata`, `/Date(ms)/` for Edm.DateTime, `/Date(ms+0000)/` for Edm.DateTimeOffset,
 * amounts as strings, empty strings for blank status codes, and OData error bodies. It honours `$select`
 * because a real release without `OverallDeliveryStatus` fails a request that selects it (PLATFORM-NOTES 5).
 * Error codes other than SY/530 are plausible, not copied from a system: clients must key on the status.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  /** Reads of A_SalesOrder received (faulted and 404 ones included), in total or for one order. */
  calls(salesOrder?: string): number;
  setLatency(ms: number): void;
  setFault(fault: S4FaultFn | undefined): void;
  close(): Promise<void>;
}

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const SERVICE = '/sap/opu/odata/sap/API_SALES_ORDER_SRV';
const ENTITY_SET = `${SERVICE}/A_SalesOrder`;
// Both key forms are valid V2: A_SalesOrder('1') and A_SalesOrder(SalesOrder='1'); '' is an escaped quote.
const ENTITY_KEY =
  /^\/sap\/opu\/odata\/sap\/API_SALES_ORDER_SRV\/A_SalesOrder\((?:SalesOrder=)?'((?:[^']|'')*)'\)$/;
const DAY_MS = 86_400_000;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export async function startS4Server(options: S4ServerOptions = {}): Promise<S4Server> {
  const orders = new Map<string, { state: SalesOrderState; createdMs: number }>();
  const counts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let total = 0;
  let latencyMs = options.latencyMs ?? 0;
  let fault: S4FaultFn | undefined;
  let url = '';

  function read(req: IncomingMessage): Answer | 'hang' {
    if (req.method !== 'GET') {
      return {
        ...odataError(405, '/IWFND/CM_MGW/405', `Method ${req.method} not allowed`),
        headers: { allow: 'GET' },
      };
    }
    const [rawPath = '', rawQuery = ''] = (req.url ?? '').split('?', 2);
    let path: string;
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      return odataError(400, '/IWFND/CM_MGW/004', 'Malformed URI');
    }
    const match = ENTITY_KEY.exec(path);
    if (!match) {
      // A_SalesOrder(…) with a lone quote means the client forgot to double it.
      if (path.startsWith(`${ENTITY_SET}(`)) {
        return odataError(400, '/IWBEP/CM_MGW_RT/004', 'Invalid key predicate');
      }
      const segment = path.split('/').pop() ?? '';
      return odataError(404, '/IWFND/MED/170', `Resource not found for segment '${segment}'`);
    }
    const salesOrder = (match[1] ?? '').replaceAll("''", "'");
    total += 1;
    const callNo = (counts.get(salesOrder) ?? 0) + 1;
    counts.set(salesOrder, callNo);

    switch (fault?.(salesOrder, callNo) ?? 'ok') {
      case 'hang':
        return 'hang';
      case 'unavailable':
        return odataError(503, '/IWFND/CM_BEC/026', 'Service temporarily unavailable');
      case 'tooMany':
        return {
          ...odataError(429, '/IWFND/CM_MGW/429', 'Too many requests'),
          headers: { 'retry-after': '1' },
        };
      case 'error500':
        return odataError(500, '/IWBEP/CM_MGW_RT/000', 'Internal error in the backend');
      case 'ok':
        break;
    }

    const order = orders.get(salesOrder);
    if (!order) return odataError(404, 'SY/530', "Resource not found for segment 'A_SalesOrderType'");
    const entity = render(order.state, order.createdMs, url, options.omitOverallDeliveryStatus === true);
    return select(entity, new URLSearchParams(rawQuery).get('$select'));
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    let answer: Answer | 'hang';
    try {
      answer = read(req);
    } catch (err) {
      // A throwing fault function is a test bug; surface it as a 500 instead of crashing the test process.
      answer = odataError(500, 'SANDBOX', `sandbox failed: ${String(err)}`);
    }
    // Leave the socket open: the client's timeout fires, or close() destroys it.
    if (answer === 'hang') return;
    const reply = answer;
    if (latencyMs <= 0) {
      send(res, reply);
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      send(res, reply);
    }, latencyMs);
    timers.add(timer);
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
    setOrder(state) {
      check(state);
      const createdMs = orders.get(state.salesOrder)?.createdMs ?? Date.parse(state.lastChangeDateTime);
      orders.set(state.salesOrder, { state: { ...state }, createdMs });
    },
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
      fault = fn;
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

type Entity = { __metadata: { id: string; uri: string; type: string; etag: string } } & Record<
  string,
  unknown
>;

/** Header fields in the order the gateway lists them; a realistic subset of A_SalesOrderType. */
function render(s: SalesOrderState, createdMs: number, base: string, omitDelivery: boolean): Entity {
  const changedMs = Date.parse(s.lastChangeDateTime);
  const createdDay = createdMs - (createdMs % DAY_MS);
  const uri = `${base}${ENTITY_SET}('${encodeURIComponent(s.salesOrder.replaceAll("'", "''"))}')`;
  // SAP writes the ETag with 7 fractional digits and URL-encodes the colons.
  const stamp = new Date(changedMs).toISOString().replace('Z', '0000Z');
  const deferred = (name: string) => ({ __deferred: { uri: `${uri}/${name}` } });
  return {
    __metadata: {
      id: uri,
      uri,
      type: 'API_SALES_ORDER_SRV.A_SalesOrderType',
      etag: `W/"datetimeoffset'${encodeURIComponent(stamp)}'"`,
    },
    SalesOrder: s.salesOrder,
    SalesOrderType: 'OR',
    SalesOrganization: '1710',
    DistributionChannel: '10',
    OrganizationDivision: '00',
    SalesGroup: '',
    SalesOffice: '',
    SalesDistrict: '',
    SoldToParty: s.soldToParty ?? '17100001',
    CreationDate: `/Date(${createdDay})/`,
    CreatedByUser: 'CB9980000010',
    LastChangeDate: `/Date(${changedMs - (changedMs % DAY_MS)})/`,
    ExternalDocumentID: '',
    LastChangeDateTime: `/Date(${changedMs}+0000)/`,
    PurchaseOrderByCustomer: s.customerReference ?? '',
    CustomerPurchaseOrderDate: null,
    SalesOrderDate: `/Date(${createdDay})/`,
    TotalNetAmount: s.totalNetAmount ?? '0.00',
    ...(omitDelivery ? {} : { OverallDeliveryStatus: s.overallDeliveryStatus ?? '' }),
    TotalBlockStatus: '',
    OverallOrdReltdBillgStatus: '',
    TransactionCurrency: s.currency ?? 'EUR',
    SDDocumentReason: '',
    PricingDate: `/Date(${createdDay})/`,
    RequestedDeliveryDate: s.requestedDeliveryDate ? `/Date(${Date.parse(s.requestedDeliveryDate)})/` : null,
    ShippingCondition: '01',
    CompleteDeliveryIsDefined: false,
    HeaderBillingBlockReason: '',
    DeliveryBlockReason: s.deliveryBlockReason ?? '',
    IncotermsClassification: 'EXW',
    CustomerPaymentTerms: '0001',
    OverallSDProcessStatus: s.overallSDProcessStatus ?? 'A',
    TotalCreditCheckStatus: '',
    OverallTotalDeliveryStatus: s.overallTotalDeliveryStatus ?? '',
    OverallSDDocumentRejectionSts: s.rejectionStatus ?? '',
    to_Item: deferred('to_Item'),
    to_Partner: deferred('to_Partner'),
    to_PricingElement: deferred('to_PricingElement'),
    to_Text: deferred('to_Text'),
  };
}

/** Applies `$select`; naming a property the release does not have fails the whole request, as on SAP. */
function select(entity: Entity, list: string | null): Answer {
  const headers = { etag: entity.__metadata.etag };
  if (list === null || list.trim() === '*') return { status: 200, body: { d: entity }, headers };
  const selected: Record<string, unknown> = { __metadata: entity.__metadata };
  for (const name of list.split(',').map((n) => n.trim())) {
    if (name === '__metadata' || !(name in entity)) {
      return odataError(
        400,
        '/IWBEP/CM_MGW_RT/022',
        `Property '${name}' not found in type 'A_SalesOrderType'`,
      );
    }
    selected[name] = entity[name];
  }
  return { status: 200, body: { d: selected }, headers };
}

function odataError(status: number, code: string, text: string): Answer {
  return { status, body: { error: { code, message: { lang: 'en', value: text } } } };
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.destroyed) return;
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    dataserviceversion: '2.0',
    ...answer.headers,
  });
  res.end(body);
}
