// Removes records that have done their job: processed events, delivery counts and duplicates' arrivals older
// than the deduplication window, sent mail and replayed dead letters older than the mail window, and what each
// event family declares expired (its Expiry list: the customer-return family's tombstones of cases never opened).
//
// Small batched deletes, not time partitions: processed_event's key (source, id) must stay unique across
// all rows, however old, for a redelivery to collide with its original. PostgreSQL requires a partitioned
// table's unique keys to include the partition key, so partitioning by processed_at would turn the key into
// (source, id, processed_at) and let a redelivered event through as new.
// Each batch is one short statement in its own transaction: locks are held for milliseconds, WAL is written
// in small pieces, and autovacuum reclaims the space while the backlog shrinks, instead of one delete of
// millions of rows that holds its locks and snapshot for minutes.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { withClient } from '../db/checkout.js';
import { EXPIRED_REPLAYED_DEAD_LETTERS } from '../events/deadLetter.js';
import {
  EXPIRED_DUPLICATE_ARRIVALS,
  EXPIRED_EVENT_ATTEMPTS,
  EXPIRED_PROCESSED_EVENTS,
} from '../events/inbox.js';
import { EXPIRED_SENT_MAILS } from '../notifications/mailOutbox.js';

export interface RetentionDeps {
  pool: Pool;
  logger: Logger;
  /** DEDUP_RETENTION_DAYS: processed events, and delivery counts of events not seen for as long. */
  processedEventDays: number;
  /** MAIL_RETENTION_DAYS: sent mail, and dead letters replayed that long ago. */
  mailDays: number;
  /** Mean time between passes; each wait is jittered by ±50 % so that instances started together spread out. */
  intervalMs?: number;
  /** Rows per delete statement, and so per transaction. */
  batchSize?: number;
  /** The event families' own expiries, run after the shared ones. */
  expiries: readonly Expiry[];
}

/** An expiry statement (src/db/deleteOldest.ts), its name in the report and the window its cutoff is of. */
export interface Expiry {
  target: string;
  cutoff: 'event' | 'mail';
  sql: string;
}

export type RetentionTarget =
  | 'processedEvents'
  | 'eventAttempts'
  | 'duplicateArrivals'
  | 'sentMails'
  | 'replayedDeadLetters';

export interface RetentionReport {
  /** False when another instance held the lock, so this pass did nothing. */
  ran: boolean;
  /** Rows deleted per target: the shared ones and the families'. */
  deleted: Record<RetentionTarget, number> & Record<string, number>;
  ms: number;
}

export interface Retention {
  start(): void;
  /** Ends the schedule; a pass in progress stops after its current batch. */
  stop(): Promise<void>;
  runOnce(): Promise<RetentionReport>;
}

/** The session-level advisory lock that lets one instance at a time run a pass. */
export const RETENTION_LOCK = 7_346_113;

// Each table's module owns its expiry statement (src/db/deleteOldest.ts says how a batch is taken); this
// module only runs them in batches, with their cutoffs.
const SHARED: ReadonlyArray<Expiry & { target: RetentionTarget }> = [
  { target: 'processedEvents', cutoff: 'event', sql: EXPIRED_PROCESSED_EVENTS },
  { target: 'eventAttempts', cutoff: 'event', sql: EXPIRED_EVENT_ATTEMPTS },
  { target: 'duplicateArrivals', cutoff: 'event', sql: EXPIRED_DUPLICATE_ARRIVALS },
  { target: 'sentMails', cutoff: 'mail', sql: EXPIRED_SENT_MAILS },
  { target: 'replayedDeadLetters', cutoff: 'mail', sql: EXPIRED_REPLAYED_DEAD_LETTERS },
];

export function createRetention(deps: RetentionDeps): Retention {
  const { pool, logger } = deps;
  const expiries = [...SHARED, ...deps.expiries];
  const intervalMs = deps.intervalMs ?? 10 * 60_000;
  const batchSize = deps.batchSize ?? 5000;
  const running = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function pass(): Promise<RetentionReport> {
    const started = performance.now();
    const deleted = Object.fromEntries(
      expiries.map(({ target }) => [target, 0]),
    ) as RetentionReport['deleted'];
    // A dedicated connection: the session lock lives exactly as long as it, so an instance that dies
    // mid-pass, or whose connection is lost, frees the lock with its connection.
    const ran = await withClient(pool, async (client, discard) => {
      const { rows } = await client.query<{ locked: boolean }>(
        'select pg_try_advisory_lock($1::bigint) as "locked"',
        [RETENTION_LOCK],
      );
      if (rows[0]?.locked !== true) return false;
      try {
        // Fixed for the whole pass, so that rows expiring meanwhile cannot keep it going.
        const cutoffs = await client.query<{ event: Date; mail: Date }>(
          `select now() - make_interval(days => $1::int) as "event", now() - make_interval(days => $2::int) as "mail"`,
          [deps.processedEventDays, deps.mailDays],
        );
        const cutoff = cutoffs.rows[0] as { event: Date; mail: Date };
        for (const { target, sql, cutoff: which } of expiries) {
          while (!stopped) {
            const removed = (await client.query(sql, [cutoff[which], batchSize])).rowCount ?? 0;
            deleted[target] = (deleted[target] ?? 0) + removed;
            if (removed < batchSize) break;
          }
        }
      } finally {
        // A connection that cannot unlock is discarded, which unlocks.
        await client.query('select pg_advisory_unlock($1::bigint)', [RETENTION_LOCK]).catch(discard);
      }
      return true;
    });
    if (!ran) {
      logger.debug('retention pass skipped: another instance is running one');
      return { ran: false, deleted, ms: Math.round(performance.now() - started) };
    }
    const report = { ran: true, deleted, ms: Math.round(performance.now() - started) };
    const total = Object.values(deleted).reduce((sum, n) => sum + n, 0);
    if (total > 0) logger.info(report, 'retention pass removed expired records');
    else logger.debug(report, 'retention pass found nothing expired');
    return report;
  }

  function runOnce(): Promise<RetentionReport> {
    const report = pass();
    const settled = report.then(
      () => {},
      () => {},
    );
    running.add(settled);
    void settled.then(() => running.delete(settled));
    return report;
  }

  function schedule(): void {
    timer = setTimeout(
      async () => {
        await runOnce().catch((err) => logger.warn({ err }, 'retention pass failed; trying again later'));
        if (!stopped) schedule();
      },
      intervalMs * (0.5 + Math.random()),
    );
    // The schedule alone must not keep the process alive.
    timer.unref();
  }

  return {
    runOnce,
    start() {
      if (timer !== undefined || stopped) return;
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(running);
    },
  };
}
