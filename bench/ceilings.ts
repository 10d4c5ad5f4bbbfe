// This machine's two ceilings at one prefetch, measured with the service's own settings: the broker (a bare
// consumer on the same AMQP client and flow control) and the database (the service's per-event path through pg).
import { cpus } from 'node:os';
import type { AmqpSettings } from '../src/config/brokerConfig.js';
import type { SalesOrder } from '../src/s4/salesOrder.js';
import type { TestQueue } from '../test/support/broker.js';
import { measureBrokerCeiling } from './brokerCeiling.js';
import { measureDatabaseCeiling } from './databaseCeiling.js';
import type { BenchDatabase } from './infrastructure.js';
import type { BenchPublisher } from './publisher.js';
import type { CeilingResult } from './results.js';
import { type BenchEvent, duplicatesOf } from './workload.js';

export interface CeilingOptions {
  /** The service's AMQP settings, with the prefetch the ceilings are measured at (from its own loadConfig). */
  amqp: AmqpSettings;
  poolSize: number;
  db: BenchDatabase;
  /** The queue `amqp.queue` names, emptied after the broker ceiling. */
  queue: TestQueue;
  publisher: BenchPublisher;
  salesOrders: Map<string, SalesOrder>;
  /** Events never published, as many as the scenario with 0 ms S/4HANA latency at this prefetch has. */
  newEvents: BenchEvent[];
  /** Twice as many for the database ceiling, over as many orders again: each order as often as in a scenario. */
  databaseEvents: BenchEvent[];
  warmupEvents: BenchEvent[];
  duplicateCount: number;
  random: () => number;
  timeoutMs: number;
}

export async function measureCeilings(options: CeilingOptions): Promise<CeilingResult> {
  const { db, queue, publisher } = options;
  const { prefetch } = options.amqp;
  // (a) The broker: the scenario's new events and as many redeliveries as its duplicates, pre-loaded into the
  // queue the settings name, drained by a consumer that only accepts. The new events alone lasted half a second
  // at prefetch 1, and that ceiling then spread from 1,755 to 4,113 messages/s within a benchmark run.
  await db.reset();
  const messages = [
    ...options.newEvents,
    ...duplicatesOf(options.newEvents, options.duplicateCount, options.random),
  ];
  await publisher.publish(options.amqp.queue, messages);
  const broker = await measureBrokerCeiling(options.amqp, messages.length, options.timeoutMs);
  await queue.purge();

  // (b) The database: twice the events through the service's handler, then redeliveries of them.
  const ceilingOptions = {
    db,
    poolSize: options.poolSize,
    concurrency: prefetch,
    salesOrders: options.salesOrders,
  };
  await measureDatabaseCeiling(ceilingOptions, options.warmupEvents, 'new');
  const database = await measureDatabaseCeiling(ceilingOptions, options.databaseEvents, 'new');
  // Four times the scenario's duplicates: the handler takes them three to six times as fast as the service, so
  // its window lasts about as long as the scenario's, seconds; with twice as many, a window of about one second
  // at prefetch 1 spread from 4,034 to 8,472 duplicates/s within a benchmark run.
  const duplicates = duplicatesOf(options.databaseEvents, 4 * options.duplicateCount, options.random);
  await db.checkpoint();
  const databaseDuplicates = await measureDatabaseCeiling(ceilingOptions, duplicates, 'duplicate');
  return { prefetch, cores: cpus().length, broker, database, databaseDuplicates };
}
