// The benchmark's events: every new event a real change of its order (the S/4HANA stand-in answers the order's
// next state at each read, changes() below), and deliveries that repeat earlier events.
import { randomBytes } from 'node:crypto';
import { OTHER_TYPE, salesOrderEvent } from '../sandbox/s4Events.js';
import type { SalesOrderState } from '../sandbox/s4Server.js';
import { WINDOW_CEILING } from '../src/messaging/creditWindow.js';

/** Events at least between an original and its repeat: well beyond what the credit window can hold. */
export const DUPLICATE_GAP = 5 * WINDOW_CEILING;

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
 * `count` new events over `orders`: every order one, in order, while they last; the rest, one each, to orders
 * drawn at random without repeating one until all are drawn, in later passes over the orders in the same order.
 * So an order's next event comes after at least as many others as its pass holds, long after its previous one is
 * settled: each is a change of its own (a consumer that held both at once would read the order once and see one).
 */
export function newEvents(orders: string[], count: number, random: () => number): BenchEvent[] {
  const used = orders.slice(0, Math.min(orders.length, count));
  const perOrder = used.map(() => 1);
  const drawn = used.map((_, i) => i);
  for (let i = drawn.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [drawn[i], drawn[j]] = [drawn[j] as number, drawn[i] as number];
  }
  for (let i = 0; i < count - used.length; i++) {
    const at = drawn[i % drawn.length] as number;
    perOrder[at] = (perOrder[at] ?? 0) + 1;
  }
  const passes = Math.max(0, ...perOrder);
  return Array.from({ length: passes }, (_, pass) =>
    used.flatMap((salesOrder, at) =>
      (perOrder[at] ?? 0) > pass
        ? [
            {
              id: randomBytes(12).toString('hex'),
              salesOrder,
              type: `sap.s4.beh.salesorder.v1.SalesOrder.${TYPES[pass % TYPES.length]}`,
            },
          ]
        : [],
    ),
  ).flat();
}

/**
 * The states S/4HANA answers for an order with `count` events, one per read in order: each moves the requested
 * delivery date a day later and the change time a minute, so each is a change the fleet manager is told of.
 */
export function changes(order: SalesOrderState, count: number): SalesOrderState[] {
  const day = Date.parse(order.requestedDeliveryDate ?? '2026-12-15');
  const changed = Date.parse(order.lastChangeDateTime);
  return Array.from({ length: count }, (_, i) => ({
    ...order,
    requestedDeliveryDate: new Date(day + i * 86_400_000).toISOString().slice(0, 10),
    lastChangeDateTime: new Date(changed + i * 60_000).toISOString(),
  }));
}

/** New events per order in `events` (the marker and repeats of one event counted once). */
export function eventsPerOrder(events: BenchEvent[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const event of new Set(events)) {
    if (event.salesOrder !== undefined) counts.set(event.salesOrder, (counts.get(event.salesOrder) ?? 0) + 1);
  }
  return counts;
}

/**
 * `events` with `count` redeliveries mixed in, each a later copy of an event drawn at random (the same body,
 * as a broker redelivers it), placed at least `gap` events after its original. The gap, larger than any credit
 * window, lets the original settle first: a repeat read while the original's is in flight would take the
 * order's next scripted state (changes()) for an event that changes nothing.
 */
export function withDuplicates(
  events: BenchEvent[],
  count: number,
  random: () => number,
  gap = DUPLICATE_GAP,
): BenchEvent[] {
  const span = events.length - gap;
  if (count > 0 && span <= 0)
    throw new Error(`${events.length} events leave no room for a repeat ${gap} later`);
  const after = new Map<number, BenchEvent[]>();
  for (let i = 0; i < count; i++) {
    const original = Math.floor(random() * span);
    const at = original + gap + Math.floor(random() * (span - original));
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
