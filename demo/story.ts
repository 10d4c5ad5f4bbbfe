// The demo's script: orders and a return S/4HANA holds before the service starts (reconciliation's baseline),
// five fleet orders in the S/4HANA sandbox, what happens to them, the events Event Mesh pushes to the webhook
// (duplicates, a redelivery, late and stale ones, a malformed one), an event that is lost, and the outcome the
// service must reach. scripts/demo.ts plays it against the real service and checks the outcome.
import {
  binaryEvent,
  CUSTOMER_RETURN_TYPE,
  customerReturnEvent,
  type S4EventSpec,
  SALES_ORDER_TYPE,
  salesOrderEvent,
} from '../sandbox/s4Events.js';
import type { CustomerReturnState } from '../sandbox/s4Returns.js';
import type { SalesOrderState } from '../sandbox/s4Server.js';
import type { S4Fault } from '../sandbox/s4State.js';

/** One push from Event Mesh: the event as S/4HANA published it, or binary mode from another producer. */
export interface Delivery {
  body: string;
  headers: Record<string, string>;
}

/** What the webhook must answer: `processed:<result>`, `duplicate`, `retry-later` or `dead-lettered`. */
export type Answer =
  | `processed:${'applied' | 'stale' | 'not_found'}`
  | 'duplicate'
  | 'retry-later'
  | 'dead-lettered';

export interface Step {
  /** One line for the console. */
  say: string;
  /** Changes S/4HANA before the delivery (a new order state, an outage, a lagging replica). */
  s4?: (s4: Sandbox) => void;
  /** Changes S/4HANA back once the delivery is answered. */
  s4After?: (s4: Sandbox) => void;
  /** Event Mesh waits for the Retry-After of the previous answer before this delivery. */
  honourRetryAfter?: boolean;
  delivery: Delivery;
  answer: Answer;
}

/** The part of the S/4HANA sandbox the story steers. */
export interface Sandbox {
  setOrder(state: SalesOrderState): void;
  deleteOrder(salesOrder: string): void;
  setFault(fault: ((salesOrder: string) => 'ok' | 'unavailable') | undefined): void;
  returns: {
    setReturn(state: CustomerReturnState): void;
    setFault(fault: ((customerReturn: string) => S4Fault) | undefined): void;
  };
}

const orders = {
  vans: {
    salesOrder: '1000473',
    soldToParty: '17100001',
    customerReference: 'NFL-2026-0142 12 delivery vans',
    requestedDeliveryDate: '2026-12-15',
    lastChangeDateTime: '2026-11-02T08:14:00Z',
    overallSDProcessStatus: 'A',
    totalNetAmount: '486000.00',
    currency: 'EUR',
  },
  taxis: {
    salesOrder: '1000474',
    soldToParty: '17100002',
    customerReference: 'CITYCAB-7731 8 electric taxis',
    requestedDeliveryDate: '2026-12-01',
    lastChangeDateTime: '2026-11-02T09:30:00Z',
    overallSDProcessStatus: 'A',
    totalNetAmount: '392000.00',
    currency: 'EUR',
  },
  trucks: {
    salesOrder: '1000475',
    soldToParty: '17100003',
    customerReference: 'AGRO-TRK-55 2 tractor units',
    requestedDeliveryDate: '2027-01-20',
    lastChangeDateTime: '2026-11-02T10:05:00Z',
    overallSDProcessStatus: 'B',
    totalNetAmount: '251800.00',
    currency: 'EUR',
  },
  pool: {
    salesOrder: '1000476',
    soldToParty: '17100001',
    customerReference: 'NFL-2026-0150 6 pool cars',
    requestedDeliveryDate: '2026-12-20',
    lastChangeDateTime: '2026-11-02T11:40:00Z',
    overallSDProcessStatus: 'A',
    totalNetAmount: '171000.00',
    currency: 'EUR',
  },
  rental: {
    salesOrder: '1000477',
    soldToParty: '17100004',
    customerReference: 'RENT-EU-3310 20 compact cars',
    requestedDeliveryDate: '2027-02-01',
    lastChangeDateTime: '2026-11-03T07:55:00Z',
    overallSDProcessStatus: 'A',
    deliveryBlockReason: '01',
    totalNetAmount: '418000.00',
    currency: 'EUR',
  },
} satisfies Record<string, SalesOrderState>;

export const INITIAL_ORDERS: SalesOrderState[] = Object.values(orders);

/** Rows of mail_recipient: the trucks' customer has its own address and reads German. */
export const RECIPIENTS = [
  { soldToParty: orders.trucks.soldToParty, recipients: ['fuhrpark@agro.demo.example'], locale: 'de' },
];

let sequence = 0;
/** A structured S/4HANA event as Event Mesh forwards it: the topic in x-address, the event as the body. */
function s4Event(variant: string, salesOrder: string, raisedAt: string): Delivery {
  sequence += 1;
  const type = `${SALES_ORDER_TYPE}${variant}`;
  const id = `6f1c2a9e-0d4b-4e51-9a7c-${String(sequence).padStart(12, '0')}`;
  const body = salesOrderEvent({ type, id, time: raisedAt, salesOrder });
  return { body, headers: { 'content-type': 'application/json', 'x-address': topic(type) } };
}

/** A binary-mode event as an HTTP push: the attributes in ce-* headers, the data as the body. */
function binaryDelivery(spec: S4EventSpec): Delivery {
  const { attributes, body } = binaryEvent(spec, 'ce-');
  const headers = {
    'content-type': 'application/json',
    'x-address': topic(attributes['ce-type'] ?? ''),
    ...attributes,
  };
  return { body, headers };
}

/** A customer-return event as S/4HANA publishes it, on the return's topic. */
function returnEvent(change: string, customerReturn: string, raisedAt: string): Delivery {
  sequence += 1;
  const id = `0b7e4d2c-5a19-4f3e-8c60-${String(sequence).padStart(12, '0')}`;
  const body = customerReturnEvent(customerReturn, change, { id, time: raisedAt });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-address': topic(`${CUSTOMER_RETURN_TYPE}${change}.v1`),
    },
  };
}

function topic(type: string): string {
  return `topic:sap/S4HANAOD/fleet/ce/${type.replaceAll('.', '/')}`;
}

const taxisDelivered: SalesOrderState = {
  ...orders.taxis,
  overallDeliveryStatus: 'C',
  lastChangeDateTime: '2026-11-27T11:45:00Z',
};
/** A warranty return of two of the vans: a fault with the sliding door (return reason 103). */
const vansReturn: CustomerReturnState = {
  customerReturn: '60000001',
  lastChangeDateTime: '2026-11-12T09:00:00Z',
  soldToParty: orders.vans.soldToParty,
  customerReference: 'NFL-RMA-0007 2 vans, sliding door',
  orderReason: '009',
  referenceSDDocument: orders.vans.salesOrder,
  referenceSDDocumentCategory: 'C',
  overallSDProcessStatus: 'A',
  rejectionStatus: 'A',
  items: [{ customerReturnItem: '10', returnReason: '103' }],
};
const vansReturnInProcess = returnEvent('Changed', '60000001', '2026-11-14T10:30:01Z');
const vansReturnItem = returnEvent('ItemChanged', '60000001', '2026-11-14T10:30:02Z');

const vansCreated = s4Event('Created.v1', '1000473', '2026-11-02T08:14:01Z');
const taxisPartlyDelivered = s4Event('OvrlDelivStsChgd.v1', '1000474', '2026-11-20T14:00:01Z');
const trucksDelivered = s4Event('OvrlDelivStsChgd.v1', '1000475', '2026-11-24T09:00:01Z');

/**
 * Orders and a warranty return that S/4HANA holds before the service starts. The first reconciliation run (a
 * baseline) puts them on the portal and sends no email: the fleet manager knew them before go-live.
 */
export const EXISTING_ORDERS: SalesOrderState[] = [
  {
    salesOrder: '1000470',
    soldToParty: orders.vans.soldToParty,
    customerReference: 'NFL-2026-0098 4 minibuses',
    requestedDeliveryDate: '2026-12-10',
    lastChangeDateTime: '2026-10-20T08:00:00Z',
    overallSDProcessStatus: 'A',
    totalNetAmount: '212000.00',
    currency: 'EUR',
  },
  {
    salesOrder: '1000471',
    soldToParty: orders.taxis.soldToParty,
    customerReference: 'CITYCAB-7702 3 taxis',
    requestedDeliveryDate: '2026-12-05',
    lastChangeDateTime: '2026-10-21T13:30:00Z',
    overallSDProcessStatus: 'A',
    totalNetAmount: '147000.00',
    currency: 'EUR',
  },
];

export const EXISTING_RETURNS: CustomerReturnState[] = [
  {
    ...vansReturn,
    customerReturn: '60000000',
    lastChangeDateTime: '2026-10-28T10:00:00Z',
    customerReference: 'NFL-RMA-0003 1 minibus, heating',
    referenceSDDocument: '1000470',
  },
];

/**
 * A change to an existing order whose event is lost (S/4HANA changes it and nothing is published): only the next
 * reconciliation run sees it. Stamped now, so that it lies inside the run's window.
 */
export function lostChange(now: Date): SalesOrderState {
  return {
    ...(EXISTING_ORDERS[0] as SalesOrderState),
    overallSDProcessStatus: 'B',
    lastChangeDateTime: now.toISOString(),
  };
}

export const STORY: Step[] = [
  { say: 'vans 1000473 created', delivery: vansCreated, answer: 'processed:applied' },
  {
    say: 'taxis 1000474 created',
    delivery: s4Event('Created.v1', '1000474', '2026-11-02T09:30:01Z'),
    answer: 'processed:applied',
  },
  {
    say: 'trucks 1000475 created (already in process)',
    delivery: s4Event('Created.v1', '1000475', '2026-11-02T10:05:01Z'),
    answer: 'processed:applied',
  },
  {
    say: 'pool cars 1000476 created',
    delivery: s4Event('Created.v1', '1000476', '2026-11-02T11:40:01Z'),
    answer: 'processed:applied',
  },
  { say: 'Event Mesh delivers "vans created" again', delivery: vansCreated, answer: 'duplicate' },
  {
    say: 'vans 1000473: delivery date moved to 2027-01-12',
    s4: (s4) =>
      s4.setOrder({
        ...orders.vans,
        requestedDeliveryDate: '2027-01-12',
        lastChangeDateTime: '2026-11-10T16:20:00Z',
      }),
    delivery: s4Event('Changed.v1', '1000473', '2026-11-10T16:20:01Z'),
    answer: 'processed:applied',
  },
  {
    say: 'taxis 1000474 partially delivered',
    s4: (s4) =>
      s4.setOrder({
        ...orders.taxis,
        overallDeliveryStatus: 'B',
        lastChangeDateTime: '2026-11-20T14:00:00Z',
      }),
    delivery: taxisPartlyDelivered,
    answer: 'processed:applied',
  },
  {
    say: 'taxis 1000474: an item event for the same change (no second email)',
    delivery: s4Event('ItemChanged.v1', '1000474', '2026-11-20T14:00:02Z'),
    answer: 'processed:applied',
  },
  {
    say: 'trucks 1000475 delivered, but S/4HANA is unavailable',
    s4: (s4) => {
      s4.setOrder({
        ...orders.trucks,
        overallDeliveryStatus: 'C',
        lastChangeDateTime: '2026-11-24T09:00:00Z',
      });
      s4.setFault((salesOrder) => (salesOrder === '1000475' ? 'unavailable' : 'ok'));
    },
    delivery: trucksDelivered,
    answer: 'retry-later',
  },
  {
    say: 'S/4HANA is back; Event Mesh redelivers after Retry-After',
    s4: (s4) => s4.setFault(undefined),
    honourRetryAfter: true,
    delivery: trucksDelivered,
    answer: 'processed:applied',
  },
  {
    say: 'taxis 1000474 fully delivered',
    s4: (s4) => s4.setOrder(taxisDelivered),
    delivery: s4Event('OvrlDelivStsChgd.v1', '1000474', '2026-11-27T11:45:01Z'),
    answer: 'processed:applied',
  },
  {
    say: 'taxis 1000474: a late event still announcing the partial delivery',
    delivery: s4Event('OvrlDelivStsChgd.v1', '1000474', '2026-11-20T14:00:03Z'),
    answer: 'processed:applied',
  },
  {
    say: 'taxis 1000474: a lagging S/4HANA read still shows the partial delivery',
    s4: (s4) =>
      s4.setOrder({
        ...orders.taxis,
        overallDeliveryStatus: 'B',
        lastChangeDateTime: '2026-11-20T14:00:00Z',
      }),
    delivery: s4Event('ItemChanged.v1', '1000474', '2026-11-27T11:45:02Z'),
    answer: 'processed:stale',
    s4After: (s4) => s4.setOrder(taxisDelivered),
  },
  {
    say: 'pool cars 1000476 deleted in S/4HANA',
    s4: (s4) => s4.deleteOrder('1000476'),
    delivery: s4Event('Deleted.v1', '1000476', '2026-11-28T08:00:01Z'),
    answer: 'processed:not_found',
  },
  {
    say: 'rental cars 1000477 created, sent in binary mode by another producer',
    delivery: binaryDelivery({
      id: 'rental-fleet-portal-0001',
      source: '/fleet/partner-portal',
      type: 'Created.v1',
      time: '2026-11-03T07:55:01Z',
      data: { SalesOrder: '1000477' },
    }),
    answer: 'processed:applied',
  },
  {
    say: 'return 60000001 of two vans created: a warranty case opens',
    s4: (s4) => s4.returns.setReturn(vansReturn),
    delivery: returnEvent('Created', '60000001', '2026-11-12T09:00:01Z'),
    answer: 'processed:applied',
  },
  {
    say: 'return 60000001 in process',
    s4: (s4) =>
      s4.returns.setReturn({
        ...vansReturn,
        overallSDProcessStatus: 'B',
        lastChangeDateTime: '2026-11-14T10:30:00Z',
      }),
    delivery: vansReturnInProcess,
    answer: 'processed:applied',
  },
  {
    say: 'Event Mesh delivers "return in process" again',
    delivery: vansReturnInProcess,
    answer: 'duplicate',
  },
  {
    say: 'return 60000001: an item event, but S/4HANA is unavailable',
    s4: (s4) => s4.returns.setFault(() => 'unavailable'),
    delivery: vansReturnItem,
    answer: 'retry-later',
  },
  {
    say: 'S/4HANA is back; the item event comes again (no new status, no email)',
    s4: (s4) => s4.returns.setFault(undefined),
    honourRetryAfter: true,
    delivery: vansReturnItem,
    answer: 'processed:applied',
  },
  {
    say: 'return 60000001 completed',
    s4: (s4) =>
      s4.returns.setReturn({
        ...vansReturn,
        overallSDProcessStatus: 'C',
        lastChangeDateTime: '2026-11-18T15:10:00Z',
      }),
    delivery: returnEvent('Changed', '60000001', '2026-11-18T15:10:01Z'),
    answer: 'processed:applied',
  },
  {
    say: 'a truncated message',
    delivery: {
      body: vansCreated.body.slice(0, 90),
      headers: { 'content-type': 'application/json', 'x-address': topic(`${SALES_ORDER_TYPE}Changed.v1`) },
    },
    answer: 'dead-lettered',
  },
];

/** What the service must have made of the story, read back from its database, metrics and mail folder. */
export const EXPECTED = {
  received: 22,
  /** The order whose first push to the portal's API hangs past PORTAL_TIMEOUT_MS (scripts/demo.ts). */
  portalTimeout: '1000475',
  processed: { applied: 15, stale: 1, not_found: 1 },
  duplicates: 2,
  released: 2,
  rejected: 1,
  portal: {
    '1000473': { status: 'Open', date: '2027-01-12', lastEvent: 'applied' },
    '1000474': { status: 'Delivered', date: '2026-12-01', lastEvent: 'stale' },
    '1000475': { status: 'Delivered', date: '2027-01-20', lastEvent: 'applied' },
    '1000476': { status: 'Open', date: '2026-12-20', lastEvent: 'not_found' },
    '1000477': { status: 'DeliveryBlocked', date: '2027-02-01', lastEvent: 'applied' },
    // Found by reconciliation: the baseline, then the repair of the lost change.
    '1000470': { status: 'InProcess', date: '2026-12-10', lastEvent: 'applied' },
    '1000471': { status: 'Open', date: '2026-12-05', lastEvent: 'applied' },
  } as Record<string, { status: string; date: string; lastEvent: string }>,
  /** The warranty case of each return: its status and the order it refers to (the portal API must agree). */
  cases: {
    '60000001': { status: 'Completed', salesOrder: '1000473' },
    '60000000': { status: 'Open', salesOrder: '1000470' },
  } as Record<string, { status: string; salesOrder: string | null }>,
  /**
   * One email per real change, in the order the changes happened: an order's with its portal status and
   * delivery date, a case's with its status.
   */
  emails: [
    '1000473 Open 2026-12-15',
    '1000474 Open 2026-12-01',
    '1000475 InProcess 2027-01-20',
    '1000476 Open 2026-12-20',
    '1000473 Open 2027-01-12',
    '1000474 PartiallyDelivered 2026-12-01',
    '1000475 Delivered 2027-01-20',
    '1000474 Delivered 2026-12-01',
    '1000477 DeliveryBlocked 2027-02-01',
    'return 60000001 Open',
    'return 60000001 InProcess',
    'return 60000001 Completed',
  ],
  /** After the story's: the one email of the lost change, which reconciliation repaired (the baseline sent none). */
  repairedEmails: ['1000470 InProcess 2026-12-10'],
  /** The runs, oldest first: each family's baseline before the events, then a delta after the lost change. */
  reconcile: [
    'salesOrder baseline done: 2 rows, 0 repairs',
    'customerReturn baseline done: 1 rows, 0 repairs',
    'salesOrder delta done: 1 rows, 1 repairs',
    'customerReturn delta done: 0 rows, 0 repairs',
  ],
};
