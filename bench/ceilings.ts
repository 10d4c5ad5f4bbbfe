// This machine's two ceilings at one prefetch, measured with the service's own settings: the broker (a bare
// consumer on the same AMQP client and flow control) and the database (the service's per-event path through pg).
// The database's duplicate ceiling needs events recorded: it is measured on the scenario's own new events, right
// before the service takes duplicates of them (run.ts).
import { cpus } from 'node:os';
import type { AmqpSettings } from '../src/config/brokerConfig.js';
import type { TestQueue } from '../test/support/broker.js';
import { measureBrokerCeiling } from './brokerCeiling.js';
import {
  type DatabaseCeiling,
  type DatabaseCeilingOptions,
  measureDatabaseCeiling,
} from './databaseCeiling.js';
import type { BenchPublisher } from './publisher.js';
import type { CeilingResult } from './results.js';
import { type BenchEvent, duplicatesOf } from './workload.js';

export interface CeilingOptions {
  /** The service's AMQP settings, with the prefetch the ceilings are measured at (from its own loadConfig). */
  amqp: AmqpSettings;
  /** The service's database path at the same prefetch, for this ceiling and measureDuplicateCeiling's alike. */
  database: DatabaseCeilingOptions;
  /** The queue `amqp.queue` names, emptied after the broker ceiling. */
  queue: TestQueue;
  publisher: BenchPublisher;
  /** Events never published, as many as the scenario with 0 ms S/4HANA latency at this prefetch has. */
  newEvents: BenchEvent[];
  /** Twice as many for the database ceiling, over as many orders again: each order as often as in a scenario. */
  databaseEvents: BenchEvent[];
  warmupEvents: BenchEvent[];
  duplicateCount: number;
  random: () => number;
  timeoutMs: number;
}

/** The broker ceiling and the database's for new events; the duplicate ceiling is measureDuplicateCeiling's. */
export async function measureCeilings(options: CeilingOptions): Promise<CeilingResult> {
  const { database: databaseOptions, queue, publisher } = options;
  const { prefetch } = options.amqp;
  // (a) The broker: the scenario's new events and as many redeliveries as its duplicates, pre-loaded into the
  // queue the settings name, drained by a consumer that only accepts. The new events alone lasted half a second
  // at prefetch 1, and that ceiling then spread from 1,755 to 4,113 messages/s within a benchmark run.
  await databaseOptions.db.reset();
  const messages = [
    ...options.newEvents,
    ...duplicatesOf(options.newEvents, options.duplicateCount, options.random),
  ];
  await publisher.publish(options.amqp.queue, messages);
  const broker = await measureBrokerCeiling(options.amqp, messages.length, options.timeoutMs);
  await queue.purge();

  // (b) The database: twice the events through the service's handler.
  await measureDatabaseCeiling(databaseOptions, options.warmupEvents, 'new');
  const database = await measureDatabaseCeiling(databaseOptions, options.databaseEvents, 'new');
  return { prefetch, cores: cpus().length, broker, database };
}

/**
 * The database's duplicate ceiling: `count` redeliveries of `recorded` (events the database holds as processed)
 * through the service's handler, four times the scenario's duplicates, as the handler takes them three to six
 * times as fast as the service, so that its window lasts about as long as the scenario's.
 * Measured right before the service's duplicate phase, on the disk its emptied outboxes settled, not with the
 * other ceilings before the scenario's new events: this shared machine's pace moves within tens of seconds, and
 * moves the service, RabbitMQ and PostgreSQL alike, so the nearer the ceiling, the more of that its ratio
 * cancels. A duplicate writes no row, so the phase after it starts on that settled disk too.
 */
export function measureDuplicateCeiling(
  options: DatabaseCeilingOptions,
  recorded: BenchEvent[],
  count: number,
  random: () => number,
): Promise<DatabaseCeiling> {
  return measureDatabaseCeiling(options, duplicatesOf(recorded, count, random), 'duplicate');
}
