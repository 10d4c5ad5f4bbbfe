// The benchmark's events, shaped like S/4HANA's: several events per changed order, published together
// (a change raises Changed.v1 plus status events), and deliveries that repeat earlier events.
import { randomBytes } from 'node:crypto';
import { OTHER_TYPE, salesOrderEvent } from '../sandbox/s4Events.js';
import type { SalesOrderState } from '../sandbox/s4Server.js';
import type { SalesOrder } from '../src/s4/salesOrder.js';

const TYPES = [
  'Changed.v1',
  'OvrlDelivStsChgd.v1',
  'ItemChanged.v1',
  'OvrlSDProcStsChgd.v1',
  'ItmDelivStsChgd.v1',
];

export interface BenchEvent {
  id: string;
  /** Undefined for the marker events, which are of another type and never reach S/4HANA. */
  salesOrder: string | undefined;
  type: string;
  /** Fixed when first published (its `time` is the publish time); a duplicate is this exact body again. */
  body?: Buffer;
  /** Wall-clock ms when the body was handed to the publisher. */
  publishedAt?: number;
}

/** A deterministic pseudo-random source (mulberry32), so that runs with the same seed publish the same shape. */
export function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface OrderBook {
  /** States for the S/4HANA stand-in. */
  states: SalesOrderState[];
  /** The same states as the service maps them, for driving the database ceiling without HTTP. */
  salesOrders: Map<string, SalesOrder>;
}

/** `count` orders numbered from `first`, in a spread of portal statuses. */
export function createOrders(first: number, count: number): OrderBook {
  const states: SalesOrderState[] = [];
  const salesOrders = new Map<string, SalesOrder>();
  for (let i = 0; i < count; i++) {
    const salesOrder = String(first + i);
    const delivery = ['', 'A', 'B', 'C'][i % 4] as string;
    const state: SalesOrderState = {
      salesOrder,
      soldToParty: '17100001',
      customerReference: `PO-${i}`,
      requestedDeliveryDate: '2026-12-15',
      lastChangeDateTime: '2026-11-30T10:00:00Z',
      overallSDProcessStatus: i % 3 === 0 ? 'B' : 'A',
      overallDeliveryStatus: delivery,
    };
    states.push(state);
    salesOrders.set(salesOrder, {
      salesOrder,
      soldToParty: '17100001',
      customerReference: `PO-${i}`,
      requestedDeliveryDate: '2026-12-15',
      changedAt: new Date('2026-11-30T10:00:00Z'),
      overallSDProcessStatus: state.overallSDProcessStatus as string,
      deliveryStatus: delivery,
      rejectionStatus: '',
      deliveryBlockReason: '',
    });
  }
  return { states, salesOrders };
}

/**
 * `count` new events over the given orders, in bursts of 1 to 2 × `perOrder` − 1 consecutive events per order
 * (mean `perOrder`), each order used for one burst while orders last.
 */
export function uniqueEvents(
  orders: string[],
  count: number,
  perOrder: number,
  random: () => number,
): BenchEvent[] {
  const events: BenchEvent[] = [];
  let next = 0;
  while (events.length < count) {
    const salesOrder = orders[next++ % orders.length] as string;
    const burst = 1 + Math.floor(random() * (2 * perOrder - 1));
    for (let i = 0; i < burst && events.length < count; i++) {
      events.push({
        id: randomBytes(12).toString('hex'),
        salesOrder,
        type: `sap.s4.beh.salesorder.v1.SalesOrder.${TYPES[i % TYPES.length]}`,
      });
    }
  }
  return events;
}

/** `count` redeliveries of events drawn from `published` (with replacement, as a broker redelivers). */
export function duplicatesOf<T>(published: T[], count: number, random: () => number): T[] {
  return Array.from({ length: count }, () => published[Math.floor(random() * published.length)] as T);
}

/** An event of another type: recorded as ignored without asking S/4HANA. Its commit time marks a position. */
export function markerEvent(): BenchEvent {
  return {
    id: `marker-${randomBytes(8).toString('hex')}`,
    salesOrder: undefined,
    type: OTHER_TYPE,
  };
}

/** The structured CloudEvent, with `time` = the publish time, so that latency can be read from the event. */
export function renderEvent(event: BenchEvent, publishedAt: number): Buffer {
  const time = new Date(publishedAt).toISOString();
  const data = event.salesOrder === undefined ? { BusinessPartner: '17100001' } : undefined;
  return Buffer.from(
    salesOrderEvent({
      type: event.type,
      id: event.id,
      time,
      salesOrder: event.salesOrder,
      data,
    }),
    'utf8',
  );
}
