// The benchmark: the compiled service at its defaults, as deployed, beside a plain consumer (plain/consumer.ts),
// each a process of its own against the local PostgreSQL (directly, or through a relay that adds a round trip)
// and RabbitMQ, the S/4HANA stand-in and an SMTP receiver that drops what it accepts. In every run each
// scenario's load goes to both, one after the other, the first place alternating from run to run; then a
// steady-rate window measures latency, and the service drains one backlog untraced and at the default sampling,
// in pairs, and once with every delivery traced, for what tracing costs. After the runs, the tables are filled
// with a full retention window (fullWindow.ts) and the service drains the headline scenario's backlog on them
// once per run. Once at the end, the service is killed half-way through a small backlog, for what a crash costs.
// Usage: npm run build && npx tsx bench/run.ts [--runs 3] [--events 10000] [--orders 8000] [--duplicates 3000]
//        [--s4-latency-ms 0,50,200] [--pg-delay-ms 0,1] [--no-drains] [--steady-seconds 60] [--no-steady]
//        [--steady-traced]
//        [--tracing-events 3000] [--tracing-pairs 3] [--no-tracing] [--no-full-window] [--crash-events 1000]
//        [--no-crash]
//        [--service-node-args="--cpu-prof --cpu-prof-dir=bench/results/profiles"] [--service-env KEY=value,…]
//        [--service-cpus 1] (the service on those cores alone, through taskset; pin the rest yourself)
//        [--smtp-no-pipelining] (the relay offers no PIPELINING: what pipelining saves)
// Writes bench/results/<timestamp>.json (and latest.json) and prints the tables; `npm run bench:docs` publishes.
// While it runs, <timestamp>.partial.json holds the runs finished so far.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type S4Server, startS4Server } from '../sandbox/s4Server.js';
import { createTestQueue, type TestQueue } from '../test/support/broker.js';
import { serviceEnv } from '../test/support/serviceEnv.js';
import { AMQP_HOST, AMQP_PORT } from '../test/support/services.js';
import { crashPhase } from './crashPhase.js';
import { FULL_WINDOW, removeDrainRows, seedFullWindow } from './fullWindow.js';
import { type BenchDatabase, createBenchDatabase } from './infrastructure.js';
import { type OtlpSink, startOtlpSink } from './otlpSink.js';
import { type PgRelay, startPgRelay } from './pgRelay.js';
import { type ConsumerUnderTest, drainPhase, type PhaseContext, steadyPhase } from './phases.js';
import { PLAIN_PREFETCH } from './plain/consumer.js';
import { buildPlainConsumer, startPlainProcess } from './plain/process.js';
import { currentSince } from './probes.js';
import { type BenchPublisher, openPublisher } from './publisher.js';
import { report } from './report.js';
import {
  type BenchResults,
  type CrashRun,
  type DrainFigures,
  type FullWindowRun,
  RESULTS_SCHEMA,
  type RunResult,
  type SteadyRun,
  type TracingRun,
} from './results.js';
import { HEADLINE, SCENARIOS, type Scenario, STEADY, scenarioName, warmupCount } from './scenarios.js';
import { type ServiceProcess, startServiceProcess } from './serviceProcess.js';
import { type SmtpSink, startSmtpSink } from './smtpSink.js';
import { spread } from './targets.js';
import {
  type BenchEvent,
  changes,
  createOrders,
  eventsPerOrder,
  markerEvent,
  newEvents,
  randomSource,
  withDuplicates,
} from './workload.js';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    events: { type: 'string', default: '10000' },
    orders: { type: 'string' },
    duplicates: { type: 'string' },
    's4-latency-ms': { type: 'string', default: '0,50,200' },
    'pg-delay-ms': { type: 'string', default: '0,1' },
    'steady-rate': { type: 'string', default: String(STEADY.perSecond) },
    'steady-seconds': { type: 'string', default: '60' },
    'no-drains': { type: 'boolean', default: false },
    'no-steady': { type: 'boolean', default: false },
    'steady-traced': { type: 'boolean', default: false },
    'smtp-no-pipelining': { type: 'boolean', default: false },
    'tracing-events': { type: 'string', default: '3000' },
    'tracing-pairs': { type: 'string', default: '3' },
    'no-tracing': { type: 'boolean', default: false },
    'no-full-window': { type: 'boolean', default: false },
    'crash-events': { type: 'string', default: '1000' },
    'no-crash': { type: 'boolean', default: false },
    'phase-timeout': { type: 'string', default: '300' },
    seed: { type: 'string', default: '42' },
    'service-node-args': { type: 'string', default: '' },
    'service-env': { type: 'string', default: '' },
    'service-cpus': { type: 'string' },
  },
});

const numbers = (list: string) => list.split(',').map(Number);
const runs = Number(args.runs);
const eventCount = Number(args.events);
// 8,000 orders and 3,000 duplicates for 10,000 new events, in proportion to a smaller --events.
const orderCount = Math.min(Number(args.orders ?? Math.round(0.8 * eventCount)), eventCount);
const duplicateCount = Number(args.duplicates ?? Math.round(0.3 * eventCount));
const perSecond = Number(args['steady-rate']);
const steadySeconds = Number(args['steady-seconds']);
const tracingEvents = Number(args['tracing-events']);
const tracingPairs = Number(args['tracing-pairs']);
const crashEvents = Number(args['crash-events']);
const latencies = numbers(args['s4-latency-ms']);
const delays = numbers(args['pg-delay-ms']);
const scenarios = args['no-drains']
  ? []
  : SCENARIOS.filter((s) => latencies.includes(s.s4LatencyMs) && delays.includes(s.pgDelayMs));
const random = randomSource(Number(args.seed));
const timeoutMs = Number(args['phase-timeout']) * 1000;
// A lever measured alone, or a profile: node flags, settings and cores for the service beside its defaults. A
// published run sets none (performanceDocs.ts refuses one that did).
const serviceOverrides = {
  nodeArgs: args['service-node-args'].split(' ').filter((flag) => flag !== ''),
  env: Object.fromEntries(
    args['service-env']
      .split(',')
      .filter((pair) => pair !== '')
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  ),
  ...(args['service-cpus'] === undefined ? {} : { cpus: args['service-cpus'] }),
};
const overridden =
  serviceOverrides.nodeArgs.length > 0 ||
  Object.keys(serviceOverrides.env).length > 0 ||
  serviceOverrides.cpus !== undefined;

const RESULTS = new URL('./results/', import.meta.url).pathname;
const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
const logDir = join(RESULTS, 'logs');
rmSync(logDir, { recursive: true, force: true });
mkdirSync(logDir, { recursive: true });

let db: BenchDatabase | undefined;
let queue: TestQueue | undefined;
let publisher: BenchPublisher | undefined;
let s4: S4Server | undefined;
let smtp: SmtpSink | undefined;
let otlp: OtlpSink | undefined;
const relays = new Map<number, PgRelay>();
// Bounded as a whole: whatever hangs, the run ends and cleans up.
const limitMinutes = 20 + 15 * runs;
const watchdog = setTimeout(() => {
  console.error(`benchmark exceeded ${limitMinutes} minutes; aborting`);
  void cleanUp().finally(() => process.exit(2));
}, limitMinutes * 60_000);
watchdog.unref();
process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)));

async function cleanUp(): Promise<void> {
  await Promise.allSettled([
    queue?.delete(),
    db?.drop(),
    publisher?.close(),
    s4?.close(),
    smtp?.close(),
    otlp?.close(),
    ...[...relays.values()].map((relay) => relay.close()),
  ]);
}

try {
  buildPlainConsumer();
  [db, queue, publisher, s4, smtp, otlp] = await Promise.all([
    createBenchDatabase(),
    createTestQueue('fon-bench'),
    openPublisher(AMQP_HOST, AMQP_PORT),
    startS4Server(),
    startSmtpSink({ pipelining: !args['smtp-no-pipelining'] }),
    startOtlpSink(),
  ]);
  for (const delay of new Set([...delays, STEADY.pgDelayMs])) {
    if (delay > 0) relays.set(delay, await startPgRelay(db.url, delay));
  }
  const results = await runAll(db, queue, publisher, s4, smtp, otlp);
  if (results.runs.some((run) => run.tracing) && otlp.exports() === 0)
    throw new Error('the traced window exported no spans: is tracing wired?');
  for (const name of [stamp, 'latest']) save(results, name);
  rmSync(join(RESULTS, `${stamp}.partial.json`), { force: true });
  console.log(`\n${report(results)}`);
  console.log(
    `\nresults: bench/results/${stamp}.json (and latest.json); logs: bench/results/logs/` +
      `\ninto docs/performance.md: npm run bench:docs -- bench/results/${stamp}.json`,
  );
} finally {
  await cleanUp();
  clearTimeout(watchdog);
}

async function runAll(
  db: BenchDatabase,
  queue: TestQueue,
  publisher: BenchPublisher,
  s4: S4Server,
  smtp: SmtpSink,
  otlp: OtlpSink,
): Promise<BenchResults> {
  const warmupOrders = createOrders(9_000_000, 2 * warmupCount(Math.max(eventCount, perSecond)));
  const orders = createOrders(
    1_000_000,
    Math.max(orderCount, perSecond * steadySeconds, tracingEvents, crashEvents),
  );
  const states = new Map([...warmupOrders, ...orders].map((state) => [state.salesOrder, state]));
  for (const state of states.values()) s4.setOrder(state);
  const warmupKeys = warmupOrders.map((state) => state.salesOrder);
  const orderKeys = orders.map((state) => state.salesOrder);
  const ctx: PhaseContext = { db, queue, publisher, s4, timeoutMs };
  const databaseUrl = (pgDelayMs: number) => relays.get(pgDelayMs)?.url ?? db.url;
  /** Has S/4HANA answer each order's states from the first again: one per event. */
  const script = (events: BenchEvent[]) => {
    for (const [salesOrder, count] of eventsPerOrder(events)) {
      const order = states.get(salesOrder) as (typeof orders)[number];
      s4.scriptReads(
        salesOrder,
        changes(order, count).map((state) => ({ state })),
      );
    }
  };
  /** Empties the database and scripts S/4HANA for `events`. */
  const prepare = async (events: BenchEvent[]) => {
    await db.reset();
    script(events);
  };

  const service = (
    name: string,
    pgDelayMs: number,
    env: Record<string, string> = {},
  ): ConsumerUnderTest & { start(): Promise<ServiceProcess> } => {
    const logFile = join(logDir, `${name}-service.log`);
    return {
      // The service at its defaults: only the endpoints are set.
      start: () =>
        startServiceProcess({
          env: {
            ...serviceEnv({
              databaseUrl: databaseUrl(pgDelayMs),
              s4Url: s4.url,
              smtpUrl: smtp.url,
              queueAddress: queue.address,
            }),
            ...serviceOverrides.env,
            ...env,
          },
          logFile,
          nodeArgs: serviceOverrides.nodeArgs,
          ...(serviceOverrides.cpus === undefined ? {} : { cpus: serviceOverrides.cpus }),
        }),
      events: 'processed_event',
      mails: 'mail_outbox',
      logFile,
      relay: relays.get(pgDelayMs),
    };
  };
  const plain = (name: string, pgDelayMs: number): ConsumerUnderTest => {
    const logFile = join(logDir, `${name}-plain.log`);
    return {
      start: async () =>
        startPlainProcess({
          databaseUrl: databaseUrl(pgDelayMs),
          s4Url: s4.url,
          smtpUrl: smtp.url,
          queue: queue.address,
          amqpHost: AMQP_HOST,
          amqpPort: AMQP_PORT,
          logFile,
        }),
      events: 'plain_processed_event',
      mails: 'plain_mail_outbox',
      logFile,
      relay: relays.get(pgDelayMs),
    };
  };

  /** A scenario's backlog: a warm-up, the marker, then new events with duplicates among them. */
  const drainLoad = () => ({
    warmup: newEvents(warmupKeys, warmupCount(eventCount), random),
    marker: markerEvent(),
    measured: withDuplicates(
      newEvents(orderKeys.slice(0, orderCount), eventCount, random),
      duplicateCount,
      random,
    ),
  });

  async function scenarioRun(run: number, scenario: Scenario) {
    s4.setLatency(scenario.s4LatencyMs);
    const load = drainLoad();
    const name = `run${run}-${scenario.name}`;
    const drain = async (consumer: ConsumerUnderTest) => {
      await prepare([...load.warmup, ...load.measured]);
      return drainPhase(ctx, consumer, load);
    };
    // Who goes first alternates, so that neither always takes the second place's warmer or busier machine.
    let serviceFigures: Awaited<ReturnType<typeof drain>>;
    let plainFigures: Awaited<ReturnType<typeof drain>>;
    if (run % 2 === 1) {
      serviceFigures = await drain(service(name, scenario.pgDelayMs));
      plainFigures = await drain(plain(name, scenario.pgDelayMs));
    } else {
      plainFigures = await drain(plain(name, scenario.pgDelayMs));
      serviceFigures = await drain(service(name, scenario.pgDelayMs));
    }
    return { ...scenario, service: serviceFigures, plain: plainFigures };
  }

  async function steadyRun(run: number): Promise<SteadyRun> {
    s4.setLatency(STEADY.s4LatencyMs);
    const load = {
      warmup: newEvents(warmupKeys, perSecond, random),
      measured: newEvents(orderKeys, perSecond * steadySeconds, random),
      perSecond,
    };
    await prepare([...load.warmup, ...load.measured]);
    // Traced, every delivery: where a slow event's time went, by its spans; tracing lengthens every event.
    const traced: Record<string, string> = args['steady-traced']
      ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_TRACES_SAMPLER_ARG: '1' }
      : {};
    const figures = await steadyPhase(
      ctx,
      service(`run${run}-steady`, STEADY.pgDelayMs, traced),
      load,
      args['steady-traced'] ? otlp : undefined,
    );
    return {
      perSecond,
      events: perSecond * steadySeconds,
      s4LatencyMs: STEADY.s4LatencyMs,
      pgDelayMs: STEADY.pgDelayMs,
      ...figures,
    };
  }

  // What tracing costs: the same backlog of new events drained untraced and traced, in the steady window's shape.
  async function tracingRun(run: number): Promise<TracingRun> {
    s4.setLatency(STEADY.s4LatencyMs);
    const load = {
      warmup: newEvents(warmupKeys, warmupCount(tracingEvents), random),
      marker: markerEvent(),
      measured: newEvents(orderKeys, tracingEvents, random),
    };
    // Off; at the default sampling (no sampler key set); every delivery (a ratio of 1).
    const settings = {
      off: {},
      sampled: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url },
      every: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_TRACES_SAMPLER_ARG: '1' },
    };
    type Setting = keyof typeof settings;
    const drained: Record<Setting, DrainFigures[]> = { off: [], sampled: [], every: [] };
    // Spans the sink received per event drained, warm-up included: what a setting really samples.
    const spans: Record<Setting, number[]> = { off: [], sampled: [], every: [] };
    const drain = async (setting: Setting) => {
      await prepare([...load.warmup, ...load.measured]);
      const name = `run${run}-tracing-${setting}-${drained[setting].length + 1}`;
      otlp.keepSpans();
      const figures = await drainPhase(ctx, service(name, STEADY.pgDelayMs, settings[setting]), load);
      spans[setting].push(otlp.takeSpans().length / (load.warmup.length + 1 + load.measured.length));
      return figures;
    };
    // The sampled drain's cost is small beside the spread between drains, so it is judged on pairs drained one
    // right after the other, each pair in the other order than the one before; every delivery traced, once.
    const pairs: TracingRun['pairs'] = [];
    for (let i = 0; i < tracingPairs; i++) {
      const pair: Setting[] = (i + run) % 2 === 0 ? ['off', 'sampled'] : ['sampled', 'off'];
      for (const setting of pair) drained[setting].push(await drain(setting));
      pairs.push({
        offMicros: (drained.off.at(-1) as DrainFigures).cpuMsPerNew * 1000,
        sampledMicros: (drained.sampled.at(-1) as DrainFigures).cpuMsPerNew * 1000,
      });
    }
    drained.every.push(await drain('every'));
    const median = (setting: Setting) => spread(drained[setting].map((d) => d.cpuMsPerNew * 1000)).median;
    const peak = (setting: Setting) => Math.max(...drained[setting].map((d) => d.peakRssMb));
    return {
      events: tracingEvents,
      s4LatencyMs: STEADY.s4LatencyMs,
      pgDelayMs: STEADY.pgDelayMs,
      cpuMicrosPerEvent: median('off'),
      tracedCpuMicrosPerEvent: median('every'),
      sampledCpuMicrosPerEvent: median('sampled'),
      spansPerEvent: { sampled: spread(spans.sampled).median, every: spread(spans.every).median },
      pairs,
      peakRssMb: peak('off'),
      tracedPeakRssMb: peak('every'),
      sampledPeakRssMb: peak('sampled'),
    };
  }

  // The headline scenario's backlog on tables that hold a full retention window, once per run; the window is
  // seeded once, and each drain's own rows are removed after it.
  async function fullWindowRuns(): Promise<void> {
    const { s4LatencyMs, pgDelayMs } = HEADLINE;
    await db.reset();
    const seeding = Date.now();
    await seedFullWindow(db.pool);
    log(`full retention window seeded in ${Math.round((Date.now() - seeding) / 1000)} s`);
    s4.setLatency(s4LatencyMs);
    for (const result of results.runs) {
      log(`run ${result.run}/${runs}: full retention window`);
      const load = drainLoad();
      script([...load.warmup, ...load.measured]);
      const since = await currentSince(db);
      const consumer = { ...service(`run${result.run}-full-window`, pgDelayMs), since };
      const figures = await drainPhase(ctx, consumer, load);
      await removeDrainRows(db.pool, since);
      const fullWindow: FullWindowRun = {
        seeded: { ...FULL_WINDOW },
        s4LatencyMs,
        pgDelayMs,
        service: figures,
      };
      result.fullWindow = fullWindow;
      save(results, `${stamp}.partial`);
    }
  }

  // What a crash costs in redeliveries, with the window fixed at the plain consumer's prefetch and at the defaults.
  async function crashRuns(): Promise<CrashRun[]> {
    s4.setLatency(HEADLINE.s4LatencyMs);
    const runs: CrashRun[] = [];
    for (const [window, env] of [
      [`AMQP_PREFETCH=${PLAIN_PREFETCH}`, { AMQP_PREFETCH: String(PLAIN_PREFETCH) }],
      ['default', {}],
    ] as const) {
      const events = newEvents(orderKeys, crashEvents, random);
      await prepare(events);
      const name = `crash-${window === 'default' ? 'default' : 'prefetch'}`;
      runs.push(await crashPhase(ctx, { ...service(name, HEADLINE.pgDelayMs, env), window }, events));
    }
    return runs;
  }

  const results: BenchResults = {
    schema: RESULTS_SCHEMA,
    startedAt: started.toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: processorName(),
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      postgres: await serverVersion(db),
    },
    settings: {
      runs,
      newEvents: eventCount,
      orders: orderCount,
      duplicates: duplicateCount,
      plainPrefetch: PLAIN_PREFETCH,
      steadyRate: perSecond,
      steadySeconds,
      ...(overridden ? { serviceOverrides } : {}),
      ...(args['steady-traced'] ? { steadyTraced: true } : {}),
      ...(args['smtp-no-pipelining'] ? { smtpPipelining: false } : {}),
    },
    runs: [],
    crashes: [],
    durationSeconds: 0,
  };
  for (let run = 1; run <= runs; run++) {
    const result: RunResult = { run, loadAverageAtStart: loadavg()[0] ?? 0, scenarios: [] };
    for (const scenario of scenarios) {
      log(`run ${run}/${runs}: ${scenario.name}`);
      result.scenarios.push(await scenarioRun(run, scenario));
    }
    if (!args['no-steady']) {
      log(`run ${run}/${runs}: steady ${perSecond}/s for ${steadySeconds} s`);
      result.steady = await steadyRun(run);
    }
    if (!args['no-tracing']) {
      log(`run ${run}/${runs}: ${tracingEvents} events drained untraced and traced`);
      result.tracing = await tracingRun(run);
    }
    results.runs.push(result);
    // Kept as it grows, so that a later failure loses no finished run.
    save(results, `${stamp}.partial`);
  }
  if (
    !args['no-full-window'] &&
    scenarios.some((s) => s.name === scenarioName(HEADLINE.s4LatencyMs, HEADLINE.pgDelayMs))
  ) {
    await fullWindowRuns();
  }
  if (!args['no-crash']) {
    log(`crash: ${crashEvents} events, killed half-way, at prefetch ${PLAIN_PREFETCH} and at the defaults`);
    results.crashes = await crashRuns();
  }
  results.durationSeconds = Math.round((Date.now() - started.getTime()) / 1000);
  return results;
}

function save(results: BenchResults, name: string): void {
  writeFileSync(join(RESULTS, `${name}.json`), JSON.stringify(results, null, 2));
}

async function serverVersion(db: BenchDatabase): Promise<string> {
  const { rows } = await db.pool.query<{ v: string }>(`select current_setting('server_version') as "v"`);
  return rows[0]?.v ?? 'unknown';
}

function log(message: string): void {
  const seconds = ((Date.now() - started.getTime()) / 1000).toFixed(1);
  console.log(`[bench ${seconds.padStart(6)} s] ${message}`);
}

/**
 * The processor as /proc/cpuinfo tells it apart: machines that give the same model name ("Intel(R) Xeon(R)
 * Processor") differ by model number and clock, and their CPU per event differs with them.
 */
function processorName(): string {
  const name = cpus()[0]?.model ?? 'unknown';
  let info = '';
  try {
    info = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return name;
  }
  const field = (key: string) => info.match(new RegExp(`^${key}\\s*: (.*)$`, 'm'))?.[1];
  const [family, model, mhz] = [field('cpu family'), field('model'), field('cpu MHz')];
  if (family === undefined || model === undefined) return name;
  return `${name} (family ${family}, model ${model}${mhz === undefined ? '' : `, ${Math.round(Number(mhz))} MHz`})`;
}
