// Gauges whose values are read when Prometheus scrapes, for state that lives in the database or in a client:
// never stale, and nothing to keep in step between scrapes.
import { Gauge, type Registry } from 'prom-client';
import type { Backlog } from '../leasedOutbox/backlog.js';

type Read<T> = () => T | Promise<T>;

/** A gauge whose one value is read at scrape time. */
export function scrapedGauge(registry: Registry, name: string, help: string, read: Read<number>): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      this.set(await read());
    },
  });
}

/** A gauge with one label, read at scrape time: exactly the label values read are exported. */
export function scrapedGaugeByLabel(
  registry: Registry,
  name: string,
  help: string,
  label: string,
  read: Read<ReadonlyArray<readonly [string, number]>>,
): void {
  new Gauge({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    async collect() {
      const values = await read();
      this.reset();
      for (const [value, count] of values) this.set({ [label]: value }, count);
    },
  });
}

/**
 * An outbox's two gauges, rows by state and the oldest pending row's age. They show the same figures: one
 * query per outbox and scrape, shared by both.
 */
export function backlogGauges(
  registry: Registry,
  read: () => Promise<Backlog>,
  names: { byState: [name: string, help: string]; oldestPending: [name: string, help: string] },
): void {
  const backlog = sharedWhileRunning(read);
  scrapedGaugeByLabel(registry, ...names.byState, 'state', async () => {
    const { pending, parked } = await backlog();
    return [
      ['pending', pending],
      ['parked', parked],
    ];
  });
  scrapedGauge(registry, ...names.oldestPending, async () => (await backlog()).oldestPendingSeconds);
}

/** Calls made while one is running share its promise: the gauges a scrape collects at once read once. */
function sharedWhileRunning<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    running ??= read().finally(() => {
      running = undefined;
    });
    return running;
  };
}
