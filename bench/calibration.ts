// How many events a run gets when --events is not given. Every scenario publishes a fixed share of them, so on a
// machine half as fast each window lasts twice as long, and the whole benchmark with it. A probe of the database
// ceiling at prefetch 100 first tells how fast this machine is (on a new database, so it reads lower than the
// ceiling measured later); a slower machine gets proportionally fewer events, so that its windows last about as
// long as on a fast one and the run stays under ten minutes.
// The shares stay fixed, so the scenarios of one run still compare with each other and with their ceilings.
import { measureDatabaseCeiling } from './databaseCeiling.js';
import type { BenchDatabase } from './infrastructure.js';
import { createOrders, uniqueEvents } from './workload.js';

/** The events of a run on a machine whose probe reaches REFERENCE_RATE or more. */
export const REFERENCE_EVENTS = 16_000;
/** The probe's new events/s at which a run gets all REFERENCE_EVENTS. */
export const REFERENCE_RATE = 2_800;
/** Below this share the windows would last tenths of a second: a slower machine takes longer instead. */
const LEAST_SHARE = 0.3;
const PROBE_EVENTS = 2_000;

export interface Calibration {
  /** The probe's new events/s. */
  rate: number;
  /** The events a run gets. */
  events: number;
}

export async function calibrate(
  db: BenchDatabase,
  poolSize: number,
  random: () => number,
): Promise<Calibration> {
  const book = createOrders(8_000_000, PROBE_EVENTS);
  const orders = book.states.map((state) => state.salesOrder);
  const options = { db, poolSize, concurrency: 100, salesOrders: book.salesOrders };
  try {
    await measureDatabaseCeiling(options, uniqueEvents(orders, PROBE_EVENTS / 4, 4, random), 'new');
    const probe = await measureDatabaseCeiling(options, uniqueEvents(orders, PROBE_EVENTS, 4, random), 'new');
    return { rate: probe.eventsPerSecond, events: eventsFor(probe.eventsPerSecond) };
  } finally {
    await db.reset();
  }
}

/** The events a run gets where the probe reaches `rate` new events/s, in hundreds. */
export function eventsFor(rate: number): number {
  const share = Math.min(1, Math.max(LEAST_SHARE, rate / REFERENCE_RATE));
  return Math.round((REFERENCE_EVENTS * share) / 100) * 100;
}

/** "N events", and how they were sized when the probe sized them: for the printed report and the README. */
export function eventsSized(
  settings: { events: number; calibrationRate?: number; referenceRate?: number; referenceEvents?: number },
  format: (n: number) => string,
): string {
  const events = `${format(settings.events)} events`;
  if (settings.calibrationRate === undefined) return events;
  const rate = format(Math.round(settings.calibrationRate));
  return (
    `${events} (sized to this machine: a probe of its database ceiling reached ${rate} new events/s; ` +
    // Runs sized before the reference was kept with them were sized from 20,000 events at 2,000/s.
    `${format(settings.referenceEvents ?? 20_000)} from ${format(settings.referenceRate ?? 2_000)}/s up)`
  );
}
