// The benchmark: the compiled service as a child process against the local PostgreSQL and RabbitMQ, the
// S/4HANA stand-in and the SMTP receiver, measured side by side with the two ceilings of this machine.
// Every scenario runs --runs times; within a run each prefetch's ceilings are measured right before its
// scenarios, and the duplicate ceiling right before the duplicate phase, so that a scenario and the ceiling it is
// compared to see the same machine. Then one steady-rate window measures latency.
// Usage: npm run build && npx tsx bench/run.ts [--runs 3] [--events N] [--profile] [--env KEY=VALUE]...
//        [--only s4-0ms-prefetch-100,pair-steady,steady] (scenario and pair names, exactly)
// Without --events, a run gets as many as this machine's speed allows within the time bound (calibration.ts).
// Writes bench/results/<timestamp>.json and .svg (and latest.json, latest.svg), and prints the tables;
// `npm run bench:docs` puts a run into docs/performance.md.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type PortalServer, startPortalServer } from '../sandbox/portalServer.js';
import { type S4Server, startS4Server } from '../sandbox/s4Server.js';
import { loadConfig } from '../src/config/loadConfig.js';
import { createTestQueue, type TestQueue } from '../test/support/broker.js';
import { serviceEnv } from '../test/support/serviceEnv.js';
import { AMQP_HOST, AMQP_PORT } from '../test/support/services.js';
import { calibrate, REFERENCE_EVENTS, REFERENCE_RATE } from './calibration.js';
import { measureCeilings, measureDuplicateCeiling } from './ceilings.js';
import { renderChart } from './chart.js';
import { summarize } from './figures.js';
import { type BenchDatabase, createBenchDatabase } from './infrastructure.js';
import { type OtlpSink, startOtlpSink } from './otlpSink.js';
import { pairedPhase } from './pairedPhase.js';
import { drainPhase, type PhaseContext, type PhaseResult, steadyPhase } from './phases.js';
import { type BenchPublisher, openPublisher } from './publisher.js';
import { printReport } from './report.js';
import type { BenchResults, RunResult } from './results.js';
import {
  type BenchSinks,
  PAIR_SHARE,
  prefetchesOf,
  SCENARIOS,
  type Scenario,
  scenarioName,
  TRACING_PAIRS,
  warmupCount,
} from './scenarios.js';
import { type SmtpSink, startSmtpSink } from './smtpSink.js';
import { evaluateTargets } from './targets.js';
import {
  createOrders,
  duplicatesOf,
  markerEvent,
  type OrderBook,
  randomSource,
  uniqueEvents,
} from './workload.js';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    events: { type: 'string' },
    'duplicate-share': { type: 'string', default: '0.3' },
    'events-per-order': { type: 'string', default: '4' },
    only: { type: 'string' },
    'steady-rate': { type: 'string', default: '200' },
    'steady-seconds': { type: 'string', default: '60' },
    'steady-prefetch': { type: 'string', default: '100' },
    'phase-timeout': { type: 'string', default: '60' },
    seed: { type: 'string', default: '42' },
    profile: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
  },
});

const RESULTS = new URL('./results/', import.meta.url).pathname;
const runs = Number(args.runs);
const duplicateShare = Number(args['duplicate-share']);
const perOrder = Number(args['events-per-order']);
const random = randomSource(Number(args.seed));
const overrides = Object.fromEntries(
  (args.env as string[]).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const only = args.only === undefined ? undefined : new Set(args.only.split(','));
const selected = (name: string) => only === undefined || only.has(name);
const pairSelected = (pair: { name: string; onRequest?: true }) =>
  only === undefined ? pair.onRequest === undefined : only.has(`pair-${pair.name}`);

const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
const logDir = join(RESULTS, 'logs');
rmSync(logDir, { recursive: true, force: true });
mkdirSync(logDir, { recursive: true });
const nodeArgs = args.profile ? ['--cpu-prof', '--cpu-prof-dir', join(RESULTS, 'profiles', stamp)] : [];

let db: BenchDatabase | undefined;
let queue: TestQueue | undefined;
let pairQueue: TestQueue | undefined;
let publisher: BenchPublisher | undefined;
let s4: S4Server | undefined;
let smtp: SmtpSink | undefined;
let otlp: OtlpSink | undefined;
let portal: PortalServer | undefined;
// Bounded as a whole: whatever hangs, the run ends and cleans up. A run takes about 1.5 minutes on an idle
// two-core machine and three times that on a busy one.
const limitMinutes = 5 + 5 * runs;
const watchdog = setTimeout(() => {
  console.error(`benchmark exceeded ${limitMinutes} minutes; aborting`);
  void cleanUp().finally(() => process.exit(2));
}, limitMinutes * 60_000);
watchdog.unref();
process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)));

async function cleanUp(): Promise<void> {
  await Promise.allSettled([
    queue?.delete(),
    pairQueue?.delete(),
    db?.drop(),
    publisher?.close(),
    s4?.close(),
    smtp?.close(),
    otlp?.close(),
    portal?.close(),
  ]);
}

try {
  [db, queue, pairQueue, publisher, s4, smtp, otlp, portal] = await Promise.all([
    createBenchDatabase(),
    createTestQueue('fon-bench'),
    createTestQueue('fon-bench-pair'),
    openPublisher(AMQP_HOST, AMQP_PORT),
    startS4Server(),
    startSmtpSink(),
    startOtlpSink(),
    startPortalServer(),
  ]);
  const portalDestinations = JSON.stringify([
    ...(JSON.parse(
      serviceEnv({ databaseUrl: '', s4Url: s4.url, smtpUrl: '' }).destinations ?? '[]',
    ) as unknown[]),
    { name: 'PORTAL', url: portal.url },
  ]);
  const results = await runAll(db, [queue, pairQueue], publisher, s4, smtp, {
    otlpUrl: otlp.url,
    portalDestinations,
  });
  const traced = results.runs.some((run) => run.pairs !== undefined);
  if (traced && otlp.exports() === 0)
    throw new Error('the tracing pairs exported no spans: is tracing wired?');
  if (smtp.accepted() === 0) throw new Error('the service sent no email: is mail wired?');
  mkdirSync(RESULTS, { recursive: true });
  const json = JSON.stringify(results, null, 2);
  const chart = await renderChart(results);
  for (const name of [stamp, 'latest']) {
    writeFileSync(join(RESULTS, `${name}.json`), json);
    writeFileSync(join(RESULTS, `${name}.svg`), chart);
  }
  console.log(printReport(results));
  console.log(
    `\nresults: bench/results/${stamp}.json and .svg (and latest.*); service logs: bench/results/logs/` +
      `\ninto docs/performance.md: npm run bench:docs -- bench/results/${stamp}.json`,
  );
  if (args.profile) console.log(`profiles: npx tsx bench/profileSummary.ts bench/results/profiles/${stamp}`);
} finally {
  await cleanUp();
  clearTimeout(watchdog);
}

async function runAll(
  db: BenchDatabase,
  [queue, pairQueue]: [TestQueue, TestQueue],
  publisher: BenchPublisher,
  s4: S4Server,
  smtp: SmtpSink,
  sinks: BenchSinks,
): Promise<BenchResults> {
  const benchEnv = (prefetch: number): Record<string, string> => ({
    ...serviceEnv({ databaseUrl: db.url, s4Url: s4.url, smtpUrl: smtp.url, queueAddress: queue.address }),
    AMQP_PREFETCH: String(prefetch),
    LOG_LEVEL: 'info',
    ...overrides,
  });
  const config = (prefetch: number) => loadConfig(benchEnv(prefetch));
  const poolSize = config(1).database.max ?? 10;
  const calibration =
    args.events === undefined
      ? await calibrate(db, poolSize, randomSource(Number(args.seed) + 1))
      : undefined;
  if (calibration !== undefined)
    log(
      `calibration: the probe of the database ceiling ran ${Math.round(calibration.rate)} new events/s: ${calibration.events} events a run`,
    );
  const total = calibration?.events ?? Number(args.events);
  const uniqueTotal = Math.round(total * (1 - duplicateShare));
  const duplicateTotal = total - uniqueTotal;

  // Enough orders for the database ceiling (twice the largest scenario) at `perOrder` events each, plus separate
  // ones for warming up.
  const warmupOrders = createOrders(9_000_000, 200);
  const orders = createOrders(1_000_000, Math.ceil((2 * uniqueTotal) / perOrder) + 1);
  for (const state of [...warmupOrders.states, ...orders.states]) s4.setOrder(state);
  const salesOrders = new Map([...warmupOrders.salesOrders, ...orders.salesOrders]);
  const orderKeys = (book: OrderBook) => book.states.map((state) => state.salesOrder);
  const phaseTimeoutMs = Number(args['phase-timeout']) * 1000;
  const context = (name: string, prefetch: number, scenario?: Scenario): PhaseContext => ({
    db,
    queue,
    publisher,
    s4,
    serviceEnv: { ...benchEnv(prefetch), ...scenario?.env?.(sinks) },
    logFile: join(logDir, `${name}.log`),
    nodeArgs,
    timeoutMs: phaseTimeoutMs,
  });
  const fresh = (count: number) => uniqueEvents(orderKeys(orders), count, perOrder, random);
  const warmupEvents = (count: number) => uniqueEvents(orderKeys(warmupOrders), count, perOrder, random);
  // The two sides of a pair take disjoint halves of the orders, so that neither waits on the other's rows.
  const half = <T>(keys: T[], side: number) =>
    keys.slice(side * (keys.length >> 1), (side + 1) * (keys.length >> 1));
  const pairEvents = (side: number, count: number) => ({
    warmup: uniqueEvents(half(orderKeys(warmupOrders), side), warmupCount(count), perOrder, random),
    measured: uniqueEvents(half(orderKeys(orders), side), count, perOrder, random),
  });

  const results: BenchResults = {
    startedAt: started.toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      postgres: await serverVersion(db),
      loadAverageAtStart: loadavg()[0] ?? 0,
      loadAverageAtEnd: 0,
    },
    settings: {
      runs,
      events: total,
      // The reference is kept with the results, which outlive a change of the constant.
      ...(calibration && {
        calibrationRate: calibration.rate,
        referenceRate: REFERENCE_RATE,
        referenceEvents: REFERENCE_EVENTS,
      }),
      duplicateShare,
      eventsPerOrder: perOrder,
      poolSize,
      logLevel: benchEnv(1).LOG_LEVEL as string,
      overrides,
    },
    runs: [],
    steady: undefined,
    summary: { scenarios: [], ceilings: [] },
    targets: [],
    durationSeconds: 0,
  };

  const scenarios = SCENARIOS.filter((s) => selected(s.name));
  async function measureRun(run: number): Promise<RunResult> {
    const result: RunResult = { run, loadAverageAtStart: loadavg()[0] ?? 0, ceilings: [], scenarios: [] };
    for (const prefetch of prefetchesOf(scenarios)) {
      // The ceilings get as many events as this prefetch's 0 ms scenario (the one they bound most closely), the
      // database more over more orders, as many times as it runs faster, so that its window lasts about as long as
      // the scenario's and is moved less by the seconds in which this shared machine runs slower: twice from
      // prefetch 20 up, five times at prefetch 1, where the database runs about five times as fast as the service.
      const databaseMultiple = prefetch === 1 ? 5 : 2;
      const zeroLatency = SCENARIOS.find((s) => s.name === scenarioName(0, prefetch));
      const uniqueCount = Math.round(uniqueTotal * (zeroLatency?.uniqueShare ?? 1));
      const duplicateCount = Math.round(duplicateTotal * (zeroLatency?.duplicateShare ?? 1));
      log(`run ${run}/${runs}: ceilings at prefetch ${prefetch}`);

      const amqp = config(prefetch).amqp;
      if (amqp === undefined) throw new Error('no AMQP configuration');
      const database = { db, poolSize, concurrency: prefetch, salesOrders };
      const ceiling = await measureCeilings({
        amqp,
        database,
        queue,
        publisher,
        newEvents: fresh(uniqueCount),
        databaseEvents: fresh(databaseMultiple * uniqueCount),
        warmupEvents: warmupEvents(warmupCount(uniqueCount)),
        duplicateCount,
        random,
        timeoutMs: phaseTimeoutMs,
      });
      result.ceilings.push(ceiling);

      for (const scenario of scenarios.filter((s) => s.prefetch === prefetch)) {
        log(`run ${run}/${runs}: scenario ${scenario.name}`);
        await db.reset();
        s4.setLatency(scenario.s4LatencyMs);
        const phase = `run${run}-${scenario.name}`;
        const unique = fresh(Math.round(uniqueTotal * scenario.uniqueShare));
        const uniqueResult = await drainPhase(context(`${phase}-unique`, prefetch, scenario), {
          warmup: warmupEvents(warmupCount(unique.length)),
          marker: markerEvent(),
          measured: unique,
        });
        const mails = await db.pool.query<{ mails: number; orders: number; pushed: number }>(
          `select (select count(*)::int from mail_outbox) as "mails",
                  (select count(*)::int from portal_order_status) as "orders",
                  (select count(*)::int from portal_push where state = 'done' and result <> 'withdrawn') as "pushed"`,
        );
        let duplicateResult: PhaseResult | undefined;
        if (scenario.duplicateShare > 0) {
          await db.emptyOutboxes();
          const duplicates = duplicatesOf(
            unique,
            Math.round(duplicateTotal * scenario.duplicateShare),
            random,
          );
          log(`run ${run}/${runs}: duplicate ceiling at prefetch ${prefetch}`);
          ceiling.databaseDuplicates = await measureDuplicateCeiling(
            database,
            unique,
            4 * duplicates.length,
            random,
          );
          duplicateResult = await drainPhase(context(`${phase}-duplicates`, prefetch, scenario), {
            warmup: duplicatesOf(unique, warmupCount(duplicates.length), random),
            marker: markerEvent(),
            measured: duplicates,
            endMarker: markerEvent(),
          });
        }
        result.scenarios.push({
          ...scenario,
          unique: uniqueResult,
          ...(duplicateResult && { duplicates: duplicateResult }),
          mailsQueued: mails.rows[0]?.mails ?? 0,
          ordersInPortal: mails.rows[0]?.orders ?? 0,
          portalPushesDone: mails.rows[0]?.pushed ?? 0,
        });
      }
    }
    for (const pair of TRACING_PAIRS.filter(pairSelected)) {
      log(`run ${run}/${runs}: pair ${pair.name}`);
      await db.reset();
      s4.setLatency(0);
      // A steady pair lasts as long whatever the machine; a draining one takes as many events as the plain scenario.
      const count =
        pair.load.kind === 'steady'
          ? pair.load.perSecond * pair.load.seconds
          : Math.round(uniqueTotal * PAIR_SHARE);
      const side = (index: number, q: TestQueue, env: Record<string, string>) => ({
        queue: q,
        serviceEnv: { ...benchEnv(100), ...env },
        logFile: join(logDir, `run${run}-pair-${pair.name}-${index}.log`),
        ...pairEvents(index, count),
      });
      result.pairs = {
        ...result.pairs,
        [pair.name]: await pairedPhase(
          { db, publisher, nodeArgs, timeoutMs: phaseTimeoutMs },
          pair.load,
          side(0, queue, {}),
          side(1, pairQueue, { ...pair.env(sinks), AMQP_QUEUE: pairQueue.address }),
        ),
      };
    }
    return result;
  }

  if (scenarios.length > 0 || TRACING_PAIRS.some(pairSelected)) {
    for (let run = 1; run <= runs; run++) results.runs.push(await measureRun(run));
  }

  if (selected('steady')) {
    const perSecond = Number(args['steady-rate']);
    const prefetch = Number(args['steady-prefetch']);
    const count = Math.round(perSecond * Number(args['steady-seconds']));
    log(`steady: ${count} events at ${perSecond}/s, prefetch ${prefetch}, S/4HANA latency 0 ms`);
    await db.reset();
    s4.setLatency(0);
    const result = await steadyPhase(context('steady', prefetch), {
      warmup: warmupEvents(perSecond),
      measured: fresh(count),
      perSecond,
    });
    results.steady = { perSecond, prefetch, s4LatencyMs: 0, ...result };
  }

  results.summary = summarize(results.runs);
  results.targets = evaluateTargets(results);
  results.machine.loadAverageAtEnd = loadavg()[0] ?? 0;
  results.durationSeconds = Math.round((Date.now() - started.getTime()) / 1000);
  return results;
}

async function serverVersion(db: BenchDatabase): Promise<string> {
  const { rows } = await db.pool.query<{ v: string }>(`select current_setting('server_version') as "v"`);
  return rows[0]?.v ?? 'unknown';
}

function log(message: string): void {
  const seconds = ((Date.now() - started.getTime()) / 1000).toFixed(1);
  console.log(`[bench ${seconds.padStart(6)} s] ${message}`);
}
