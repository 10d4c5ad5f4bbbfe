// The database ceiling: the service's own per-event path, imported from src/ (createEventHandler: checkInbox,
// then the effect transaction), driven straight through `pg` at the service's concurrency (as many events in
// flight as the prefetch, sharing a pool of the service's size), with the S/4HANA read answered at once from
// memory and logging off. What is left is the SQL and its round trips: no service can go faster. Driving the
// handler itself, not a copy of its queries, keeps the ceiling equal to whatever the service runs.
import pg from 'pg';
import { applyEffect } from '../src/events/applyEffect.js';
import type { InboundMessage } from '../src/events/cloudEvent.js';
import { groupEffects } from '../src/events/effectGroups.js';
import { createEventHandler } from '../src/events/handleEvent.js';
import type { SalesOrder } from '../src/s4/salesOrder.js';
import { createLogger } from '../src/telemetry/logger.js';
import type { BenchDatabase } from './infrastructure.js';
import { databaseCpu } from './probes.js';
import { machineBusySeconds } from './processStats.js';
import { percentile } from './stats.js';
import { type BenchEvent, renderEvent } from './workload.js';

export interface DatabaseCeiling {
  eventsPerSecond: number;
  events: number;
  /** Per-event time of the database work alone, in ms. */
  p50Ms: number;
  p99Ms: number;
  /** CPU of the pool's PostgreSQL backends per 1,000 events. */
  databaseCpuSecondsPer1000: number;
  /** Busy CPU of the whole machine (PostgreSQL, the handler, anything else) per 1,000 events. */
  machineCpuSecondsPer1000: number;
}

export interface DatabaseCeilingOptions {
  /** Its CPU is that of its sessions other than the benchmark's own. */
  db: BenchDatabase;
  poolSize: number;
  concurrency: number;
  salesOrders: Map<string, SalesOrder>;
}

const BENCH_MAIL = { to: ['fleet-manager@fleet.example'], locale: 'en', messageIdDomain: 'fleet.example' };

/**
 * Runs `events` through the handler; every one must end as `expect` (new events 'applied' or 'stale',
 * duplicates 'duplicate'), or the ceiling would be measuring something else.
 */
export async function measureDatabaseCeiling(
  options: DatabaseCeilingOptions,
  events: BenchEvent[],
  expect: 'new' | 'duplicate',
): Promise<DatabaseCeiling> {
  const pool = new pg.Pool({ connectionString: options.db.url, max: options.poolSize });
  const handle = createEventHandler({
    pool,
    readOrder: async (salesOrder) => ({
      order: options.salesOrders.get(salesOrder) ?? null,
      readAt: new Date(),
    }),
    writeEffect: groupEffects((events, order) => applyEffect(pool, events, order, BENCH_MAIL)),
    retryPolicy: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    maxDeliveries: 10,
    maxMessageBytes: 1024 * 1024,
    onMailQueued: () => {},
    logger: createLogger('silent'),
  });
  const messages: InboundMessage[] = events.map((event) => {
    if (event.body === undefined) {
      event.publishedAt = Date.now();
      event.body = renderEvent(event, event.publishedAt);
    }
    return { body: event.body, contentType: 'application/json', binaryAttributes: {} };
  });
  const durations: number[] = [];
  let next = 0;
  try {
    // Open the pool's connections first, as a running service has them.
    await Promise.all(Array.from({ length: options.poolSize }, () => pool.query('select 1')));
    const cpuBefore = await databaseCpu(options.db);
    const busyBefore = machineBusySeconds();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next < messages.length) {
          const message = messages[next++] as InboundMessage;
          const t0 = performance.now();
          const { outcome } = await handle(message, { channel: 'amqp' });
          durations.push(performance.now() - t0);
          const result = outcome.kind === 'accept' ? outcome.result : outcome.kind;
          const fits =
            expect === 'duplicate' ? result === 'duplicate' : result === 'applied' || result === 'stale';
          if (!fits) throw new Error(`database ceiling: a ${expect} event ended as ${result}`);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const busy = machineBusySeconds() - busyBefore;
    const cpu = (await databaseCpu(options.db)) - cpuBefore;
    durations.sort((a, b) => a - b);
    return {
      eventsPerSecond: messages.length / seconds,
      events: messages.length,
      p50Ms: percentile(durations, 0.5),
      p99Ms: percentile(durations, 0.99),
      databaseCpuSecondsPer1000: (cpu / messages.length) * 1000,
      machineCpuSecondsPer1000: (busy / messages.length) * 1000,
    };
  } finally {
    await pool.end();
  }
}
