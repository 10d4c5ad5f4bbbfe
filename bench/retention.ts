// Retention under load: a large backlog of expired processed events and delivery counts is deleted by the
// real retention pass while the service's own per-event transaction runs at a steady rate beside it.
// Reports the deletion rate, the transaction latency with and without deletion running, and what that
// means for a week of backlog. Creates its own database and drops it again; bounded to about 2 minutes.
//
//   npx tsx bench/retention.ts        (TEST_DATABASE_URL, BENCH_EXPIRED_ROWS to override)
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import type { ParsedEvent } from '../src/events/cloudEvent.js';
import { FAMILY_EXPIRIES } from '../src/families/index.js';
import { applyEffect } from '../src/families/salesOrder/effect.js';
import type { PortalOrder, PortalStatus } from '../src/families/salesOrder/state.js';
import { createRetention, type RetentionReport } from '../src/maintenance/retention.js';
import { createLogger } from '../src/telemetry/logger.js';
import { createDatabase, type Database } from '../test/support/database.js';
import { percentile, round, table } from './stats.js';

const EXPIRED_EVENTS = Number(process.env.BENCH_EXPIRED_ROWS ?? 1_000_000);
const EXPIRED_ATTEMPTS = Math.round(EXPIRED_EVENTS / 5);
// Young rows the pass must leave alone: the last 18 minutes at 100 events/s.
const YOUNG_EVENTS = 108_000;
const EVENTS_PER_SECOND = 100;
const BASELINE_MS = 15_000;
const DELETION_BUDGET_MS = 60_000;
// Whatever the machine's load, the run ends (and drops its database) within three minutes.
const HARD_LIMIT_MS = 170_000;
const BATCH_SIZE = 5000;
const WEEK_AT_RATE = EVENTS_PER_SECOND * 86_400 * 7; // 60.48 M rows
const ORDERS = 20_000;
const STATUSES: PortalStatus[] = ['Open', 'InProcess', 'PartiallyDelivered', 'Delivered'];

interface Phase {
  name: string;
  latenciesMs: number[];
  failures: number;
  seconds: number;
}

let database: Database | undefined;

async function main(): Promise<void> {
  database = await createDatabase('fon_bench_retention');
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  // Closing connections may still be on their way out when the database is dropped.
  pool.on('error', () => {});
  try {
    await migrate(pool);
    const fillSeconds = await fill(pool);
    const baseline = await drive(pool, 'without deletion', () => sleep(BASELINE_MS));

    const retention = createRetention({
      pool,
      logger: createLogger('warn'),
      processedEventDays: 7,
      mailDays: 30,
      batchSize: BATCH_SIZE,
      expiries: FAMILY_EXPIRIES,
    });
    let report: RetentionReport | undefined;
    let deletionSeconds = 0;
    const during = await drive(pool, 'during deletion', async () => {
      const started = performance.now();
      const budget = setTimeout(() => void retention.stop(), DELETION_BUDGET_MS);
      report = await retention.runOnce();
      clearTimeout(budget);
      deletionSeconds = (performance.now() - started) / 1000;
    });
    if (report === undefined) throw new Error('the retention pass did not report');
    // Deleting only marks rows dead; vacuum does the rest of the work, so it is measured as well. A manual
    // vacuum runs unthrottled: the worst case for the transactions beside it (autovacuum is throttled).
    let vacuumSeconds = 0;
    const vacuum = await drive(pool, 'during vacuum', async () => {
      const started = performance.now();
      await pool.query('vacuum processed_event, event_attempt');
      vacuumSeconds = (performance.now() - started) / 1000;
    });
    const left = await pool.query<{ n: number }>(
      `select count(*)::int as "n" from processed_event where processed_at < now() - interval '7 days'`,
    );
    await summarise({
      report,
      deletionSeconds,
      vacuumSeconds,
      expiredLeft: left.rows[0]?.n ?? 0,
      fillSeconds,
      phases: [baseline, during, vacuum],
    });
  } finally {
    await pool.end();
    await database.drop();
  }
}

/** Expired rows spread over the hours before the retention window, as 100 events/s leave them. */
async function fill(pool: pg.Pool): Promise<number> {
  const started = performance.now();
  process.stdout.write(
    `filling ${EXPIRED_EVENTS + YOUNG_EVENTS} processed events, ${EXPIRED_ATTEMPTS} attempts… `,
  );
  const events = (count: number, newest: string) =>
    pool.query(
      `insert into processed_event (source, id, type, family, key, outcome, payload_hash, processed_at)
       select '/default/sap.s4.beh/244572008', gen_random_uuid()::text,
              'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1', 'salesOrder', (1000000 + g % $2::int)::text, 'applied',
              encode(sha256(g::text::bytea), 'hex'), $3::timestamptz - g * interval '10 ms'
       from generate_series(1, $1::int) g`,
      [count, ORDERS, newest],
    );
  await events(EXPIRED_EVENTS, new Date(Date.now() - 7.1 * 86_400_000).toISOString());
  await events(YOUNG_EVENTS, new Date().toISOString());
  await pool.query(
    `insert into event_attempt (source, id, attempts, last_error, first_seen_at, last_seen_at)
     select '/default/sap.s4.beh/244572008', gen_random_uuid()::text, 3, 'TransientError: S/4HANA unavailable',
            now() - interval '8 days' - g * interval '10 ms', now() - interval '8 days' - g * interval '10 ms'
     from generate_series(1, $1::int) g`,
    [EXPIRED_ATTEMPTS],
  );
  await pool.query('vacuum analyze processed_event, event_attempt');
  const seconds = (performance.now() - started) / 1000;
  console.log(`${round(seconds)} s`);
  return seconds;
}

/**
 * Runs the per-event transaction of handleEvent.ts at a fixed rate until `until` resolves. Open loop: each
 * transaction starts on schedule whether or not earlier ones finished, so a slow database shows as latency
 * instead of silently lowering the rate.
 */
async function drive(pool: pg.Pool, name: string, until: () => Promise<void>): Promise<Phase> {
  process.stdout.write(`driving ${EVENTS_PER_SECOND} transactions/s ${name}… `);
  const latenciesMs: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let failures = 0;
  let done = false;
  const started = performance.now();
  const finished = until().finally(() => {
    done = true;
  });
  for (let issued = 0; !done; ) {
    const due = Math.floor(((performance.now() - started) / 1000) * EVENTS_PER_SECOND);
    for (; issued < due; issued++) {
      const begin = performance.now();
      const work = transaction(pool).then(
        () => void latenciesMs.push(performance.now() - begin),
        () => void failures++,
      );
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    }
    await sleep(2);
  }
  await finished;
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  console.log(`${latenciesMs.length} transactions in ${round(seconds)} s`);
  return { name, latenciesMs: latenciesMs.sort((a, b) => a - b), failures, seconds };
}

/** The effect transaction of one event, as handleEvent.ts runs it after reading S/4HANA. */
async function transaction(pool: pg.Pool): Promise<void> {
  const salesOrder = String(1_000_000 + Math.floor(Math.random() * ORDERS));
  const event: ParsedEvent = {
    source: '/default/sap.s4.beh/244572008',
    id: randomUUID(),
    type: 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1',
    family: 'salesOrder',
    key: salesOrder,
    payloadHash: `m1:${randomBytes(32).toString('hex')}`,
    legacyPayloadHash: () => '',
  };
  const now = new Date();
  const order: PortalOrder = {
    salesOrder,
    portalStatus: STATUSES[Math.floor(Math.random() * STATUSES.length)] as PortalStatus,
    requestedDeliveryDate: '2026-12-15',
    soldToParty: '17100001',
    customerReference: 'PO-4711',
    changedAt: now,
    readAt: now,
  };
  await applyEffect(pool, [event], order, {
    to: ['fleet-manager@fleet.example'],
    locale: 'en',
    messageIdDomain: 'bench.example',
  });
}

interface Measured {
  report: RetentionReport;
  deletionSeconds: number;
  vacuumSeconds: number;
  expiredLeft: number;
  fillSeconds: number;
  phases: Phase[];
}

async function summarise(measured: Measured): Promise<void> {
  const { report, deletionSeconds, vacuumSeconds, expiredLeft, fillSeconds, phases } = measured;
  const rows = report.deleted.processedEvents + report.deleted.eventAttempts;
  const rowsPerSecond = rows / deletionSeconds;
  const withVacuumPerSecond = rows / (deletionSeconds + vacuumSeconds);
  const weekHours = WEEK_AT_RATE / rowsPerSecond / 3600;
  const weekWithVacuumHours = WEEK_AT_RATE / withVacuumPerSecond / 3600;
  // In steady state a pass every 10 minutes finds 10 minutes of events expired.
  const steadyPassSeconds = (EVENTS_PER_SECOND * 600) / rowsPerSecond;
  const latency = phases.map((phase) => ({
    phase: phase.name,
    transactions: phase.latenciesMs.length,
    failures: phase.failures,
    achievedPerSecond: phase.latenciesMs.length / phase.seconds,
    p50Ms: percentile(phase.latenciesMs, 0.5),
    p99Ms: percentile(phase.latenciesMs, 0.99),
    maxMs: phase.latenciesMs.at(-1) ?? Number.NaN,
  }));
  console.log();
  console.log(
    table(
      ['deletion', 'value'],
      [
        ['processed_event rows deleted', report.deleted.processedEvents],
        ['event_attempt rows deleted', report.deleted.eventAttempts],
        ['expired processed_event rows left', expiredLeft],
        ['deletion seconds', deletionSeconds],
        ['deletion rows/s', Math.round(rowsPerSecond)],
        ['vacuum seconds afterwards', vacuumSeconds],
        ['rows/s, deletion and vacuum together', Math.round(withVacuumPerSecond)],
        [`a week at ${EVENTS_PER_SECOND}/s (${WEEK_AT_RATE / 1e6} M rows), deletion only, hours`, weekHours],
        ['the same week, deletion and vacuum, hours', weekWithVacuumHours],
        ['steady-state pass every 10 min (60,000 rows), s', steadyPassSeconds],
      ],
    ),
  );
  console.log();
  console.log(
    table(
      ['per-event transaction', 'count', 'failed', 'tx/s', 'p50 ms', 'p99 ms', 'max ms'],
      latency.map((l) => [
        l.phase,
        l.transactions,
        l.failures,
        l.achievedPerSecond,
        l.p50Ms,
        l.p99Ms,
        l.maxMs,
      ]),
    ),
  );
  const result = {
    measuredAt: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      loadAverage1m: loadavg()[0],
      note: 'shared with other work while measured',
    },
    setup: {
      expiredProcessedEvents: EXPIRED_EVENTS,
      expiredEventAttempts: EXPIRED_ATTEMPTS,
      youngProcessedEvents: YOUNG_EVENTS,
      batchSize: BATCH_SIZE,
      eventsPerSecond: EVENTS_PER_SECOND,
      fillSeconds: round(fillSeconds),
    },
    deletion: {
      ...report.deleted,
      expiredProcessedEventsLeft: expiredLeft,
      seconds: round(deletionSeconds),
      rowsPerSecond: Math.round(rowsPerSecond),
      vacuumSeconds: round(vacuumSeconds),
      rowsPerSecondWithVacuum: Math.round(withVacuumPerSecond),
      weekOfBacklogHours: round(weekHours),
      weekOfBacklogWithVacuumHours: round(weekWithVacuumHours),
      steadyStatePassSeconds: round(steadyPassSeconds),
    },
    latency: latency.map((l) => ({
      ...l,
      achievedPerSecond: round(l.achievedPerSecond),
      p50Ms: round(l.p50Ms),
      p99Ms: round(l.p99Ms),
      maxMs: round(l.maxMs),
    })),
  };
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(
    new URL('./results/retention.json', import.meta.url),
    `${JSON.stringify(result, null, 2)}\n`,
  );
}

function abandon(why: string, code: number): void {
  console.error(`\n${why}: dropping ${database?.name ?? 'nothing yet'}`);
  void (database?.drop() ?? Promise.resolve()).finally(() => process.exit(code));
}
process.once('SIGINT', () => abandon('interrupted', 130));
setTimeout(() => abandon(`over the ${HARD_LIMIT_MS / 1000} s limit`, 1), HARD_LIMIT_MS).unref();

await main();
