// The benchmark's events, shaped like S/4HANA's: several events per changed order, published together
// (a change raises Changed.v1 plus status events), and deliveries that repeat earlier events.
import { randomBytes } from 'node:crypto';
import { OTHER_TYPE, salesOrderEvent } from '../sandbox/s4Events.js';
import type { SalesOrderState } from '../sandbox/s4Server.js';

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

/** `count` orders numbered from `first`, in a spread of portal statuses, as the S/4HANA stand-in holds them. */
export function createOrders(first: number, count: number): SalesOrderState[] {
  return Array.from({ length: count }, (_, i) => ({
    salesOrder: String(first + i),
    soldToParty: '17100001',
    customerReference: `PO-${i}`,
    requestedDeliveryDate: '2026-12-15',
    lastChangeDateTime: '2026-11-30T10:00:00Z',
    overallSDProcessStatus: i % 3 === 0 ? 'B' : 'A',
    overallDeliveryStatus: ['', 'A', 'B', 'C'][i % 4] as string,
  }));
}

/**
 * `count` new events over `orders`: every order one, in order, while they last; the rest go to orders drawn at
 * random, each right after that order's first, as S/4HANA raises Changed.v1 and a status event together.
 */
export function newEvents(orders: string[], count: number, random: () => number): BenchEvent[] {
  const used = orders.slice(0, Math.min(orders.length, count));
  const extra = new Map<number, number>();
  for (let i = used.length; i < count; i++) {
    const at = Math.floor(random() * used.length);
    extra.set(at, (extra.get(at) ?? 0) + 1);
  }
  return used.flatMap((salesOrder, at) =>
    Array.from({ length: 1 + (extra.get(at) ?? 0) }, (_, i) => ({
      id: randomBytes(12).toString('hex'),
      salesOrder,
      type: `sap.s4.beh.salesorder.v1.SalesOrder.${TYPES[i % TYPES.length]}`,
    })),
  );
}

/**
 * `events` with `count` redeliveries mixed in, each a later copy of an event drawn at random (the same body,
 * as a broker redelivers it), placed anywhere after its original.
 */
export function withDuplicates(events: BenchEvent[], count: number, random: () => number): BenchEvent[] {
  const after = new Map<number, BenchEvent[]>();
  for (let i = 0; i < count; i++) {
    const original = Math.floor(random() * events.length);
    const at = original + Math.floor(random() * (events.length - original));
    after.set(at, [...(after.get(at) ?? []), events[original] as BenchEvent]);
  }
  return events.flatMap((event, i) => [event, ...(after.get(i) ?? [])]);
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
