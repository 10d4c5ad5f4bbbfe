// How many events a run gets when --events is not given. Every scenario publishes a fixed share of them, so on a
// machine half as fast each window lasts twice as long, and the whole benchmark with it: 20,000 events took 478
// to 582 s where the database ceiling at prefetch 100 reached 2,800 new events/s, and 767 s where it reached
// 1,330. A probe of the same ceiling first tells how fast this machine is (on a new database, so it reads lower
// than the ceiling measured later: 850 to 1,010/s on the machine of 1,330); a slower machine gets proportionally
// fewer events, so that its windows last about as long as on a fast one and the run stays under ten minutes.
// Since the identity checks of one turn share a statement the probe reads about 1.4 times higher on the same
// machine (1,019 before, 1,439 after), while the phases at prefetch 1 and 20 gained less: sized from 2,000/s, a
// run of 14,400 events took 685 s, hence the reference of 2,800/s. A run of all 20,000 still took 598 s where
// the probe reached 3,765/s (a probe on an idle machine, the runs after it on one the benchmark keeps busy): too
// near the ten minutes, hence 16,000.
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
