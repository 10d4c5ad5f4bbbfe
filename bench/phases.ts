// One measurement each: the service (a child process) drains a pre-loaded queue of new events, or of
// duplicates, or takes events published at a steady rate. Rates and CPU are taken between commit timestamps
// (processed_event.processed_at, the database's clock; the machine's clock like the publisher's), so that
// starting, connecting and the last stragglers are not counted.
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { S4Server } from '../sandbox/s4Server.js';
import type { TestQueue } from '../test/support/broker.js';
import type { BenchDatabase } from './infrastructure.js';
import {
  commitsSoFar,
  commitTimes,
  databaseCpu,
  gaugeValue,
  histogramMeanMs,
  outcomes,
  processedCount,
} from './probes.js';
import type { CpuSampler } from './processStats.js';
import type { BenchPublisher } from './publisher.js';
import { type CpuSource, startServiceProcess } from './serviceProcess.js';
import { percentile } from './stats.js';
import type { BenchEvent } from './workload.js';

export interface PhaseContext {
  db: BenchDatabase;
  queue: TestQueue;
  publisher: BenchPublisher;
  s4: S4Server;
  serviceEnv: Record<string, string>;
  logFile: string;
  nodeArgs: string[];
  timeoutMs: number;
}

export interface PhaseResult {
  events: number;
  eventsPerSecond: number;
  /** Orders read from S/4HANA per measured event, counted by the stand-in (a batched request reads several). */
  s4CallsPerEvent: number;
  /** HTTP requests to S/4HANA per measured event: below the reads when one request reads many orders. */
  s4RequestsPerEvent: number;
  /** CPU of the service process per 1,000 events, in the measured window. */
  cpuSecondsPer1000: number;
  /** RabbitMQ's CPU per 1,000 events in the window (the whole broker: indicative on a shared machine). */
  brokerCpuSecondsPer1000: number;
  /** The load generator's CPU per 1,000 events in the window: publisher, S/4HANA and SMTP stand-ins. */
  loadGeneratorCpuSecondsPer1000: number;
  /** Share of all cores busy during the window, whoever used them (other work on a shared machine included). */
  machineBusy: number;
  /**
   * CPU of the service's PostgreSQL backends per 1,000 events, over the service process's whole run (warm-up
   * included): where the database's share of the machine goes. Shared processes (WAL writer) not included.
   */
  databaseCpuSecondsPer1000: number;
  peakRssMb: number;
  /** Mean time of one S/4HANA read as the service saw it (its own histogram), whole run. */
  s4ReadMeanMs: number;
  /** Mean time from receiving an event to its outcome (the service's histogram), whole run. */
  handlingMeanMs: number;
  /** Transactions committed per event over the service's whole run, its mail included (and the bench's reads). */
  commitsPerEvent: number;
  /** False when the phase ran into its time limit; the figures then cover what was done by then. */
  complete: boolean;
  outcomes: Record<string, number>;
  deadLetters: number;
}

export interface LatencyResult extends PhaseResult {
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /**
   * The longest event-loop delay inside the service during the window (`monitorEventLoopDelay` behind its own
   * `nodejs_eventloop_lag_max_seconds`, sampled every 10 ms). About 10 ms means the loop never stalled and the
   * slowest events waited on a slow path; a delay close to the latency maximum means a pause of the process.
   */
  eventLoopMaxDelayMs: number;
}

function cpuFigures(cpu: CpuSampler<CpuSource>, from: number, to: number, events: number) {
  const per1000 = (name: CpuSource) => (cpu.between(name, from, to) / events) * 1000;
  return {
    cpuSecondsPer1000: per1000('service'),
    brokerCpuSecondsPer1000: per1000('broker'),
    loadGeneratorCpuSecondsPer1000: per1000('loadGenerator'),
    machineBusy: cpu.between('machine', from, to) / (((to - from) / 1000) * cpus().length),
  };
}

/** Polls until `done` holds or the time is up; returns whether it held. */
async function waitFor(done: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await sleep(100);
  }
  return done();
}

/** Requests since the `from`-th that asked for any order of `events` (warm-up orders are others). */
function s4Requests(s4: S4Server, events: BenchEvent[], from: number): number {
  const orders = new Set(events.map((event) => event.salesOrder));
  return s4
    .requestLog()
    .slice(from)
    .filter((request) => request.salesOrders.some((order) => orders.has(order))).length;
}

function s4Calls(s4: S4Server, events: BenchEvent[]): number {
  const orders = new Set(events.map((event) => event.salesOrder).filter((order) => order !== undefined));
  let calls = 0;
  for (const order of orders) calls += s4.calls(order);
  return calls;
}

/**
 * Pre-loads the queue with `warmup`, a marker, then `measured`, and starts the service. The window runs from
 * the marker's commit to the last commit of a measured event, or to `endMarker`'s when one is given (for
 * duplicates, which commit nothing themselves). Events before the marker let the JIT and the pools warm up.
 */
export async function drainPhase(
  ctx: PhaseContext,
  load: { warmup: BenchEvent[]; marker: BenchEvent; measured: BenchEvent[]; endMarker?: BenchEvent },
): Promise<PhaseResult> {
  const { db, queue, s4 } = ctx;
  const all = [...load.warmup, load.marker, ...load.measured, ...(load.endMarker ? [load.endMarker] : [])];
  await ctx.publisher.publish(queue.address, all);
  const before = await processedCount(db);
  const callsBefore = s4Calls(s4, load.measured);
  const requestsBefore = s4.requests();
  const commitsBefore = await commitsSoFar(db);

  const service = await startServiceProcess({
    env: ctx.serviceEnv,
    logFile: ctx.logFile,
    nodeArgs: ctx.nodeArgs,
  });
  let complete: boolean;
  let stopped: { peakRssBytes: number };
  let backendCpu = 0;
  let metrics = '';
  try {
    if (load.endMarker !== undefined) {
      const end = load.endMarker.id;
      complete = await waitFor(async () => (await commitTimes(db, [end])).has(end), ctx.timeoutMs);
    } else {
      // Without an end marker every event is new and leaves one processed_event row.
      const expected = before + all.length;
      // Mail still queued then is not waited for: the next phase starts from an emptied outbox (run.ts).
      complete = await waitFor(async () => (await processedCount(db)) >= expected, ctx.timeoutMs);
    }
    backendCpu = await databaseCpu(db);
    metrics = await service.metrics();
  } finally {
    stopped = await service.stop();
    // Anything the service still held went back to the queue when it disconnected.
    await sleep(600);
    await queue.purge();
  }
  const commits = (await commitsSoFar(db)) - commitsBefore;

  const measuredIds = [...new Set(load.measured.map((event) => event.id))];
  const times = await commitTimes(db, [
    load.marker.id,
    ...(load.endMarker ? [load.endMarker.id] : []),
    ...measuredIds,
  ]);
  const start = times.get(load.marker.id);
  let end: number | undefined;
  let done: number;
  if (load.endMarker !== undefined) {
    end = times.get(load.endMarker.id);
    done = load.measured.length;
  } else {
    const measuredTimes = measuredIds.map((id) => times.get(id)).filter((ms) => ms !== undefined);
    end = measuredTimes.length > 0 ? Math.max(...measuredTimes) : undefined;
    done = measuredTimes.length;
  }
  if (start === undefined || end === undefined || end <= start) {
    throw new Error(`phase made no measurable progress in ${ctx.timeoutMs} ms; see ${ctx.logFile}`);
  }
  const seconds = (end - start) / 1000;
  return {
    events: done,
    eventsPerSecond: done / seconds,
    s4CallsPerEvent: (s4Calls(s4, load.measured) - callsBefore) / done,
    s4RequestsPerEvent: s4Requests(s4, load.measured, requestsBefore) / done,
    ...cpuFigures(service.cpu, start, end, done),
    databaseCpuSecondsPer1000: (backendCpu / all.length) * 1000,
    commitsPerEvent: commits / all.length,
    s4ReadMeanMs: histogramMeanMs(metrics, 'fon_s4_request_duration_seconds'),
    handlingMeanMs: histogramMeanMs(metrics, 'fon_event_duration_seconds'),
    peakRssMb: stopped.peakRssBytes / 2 ** 20,
    complete,
    ...(await outcomes(db)),
  };
}

/**
 * Starts the service on an empty queue, warms it up, then publishes `measured` at `perSecond` and reads each
 * event's latency from publish (the bench's clock) to commit (processed_at, the database's clock, same machine).
 */
export async function steadyPhase(
  ctx: PhaseContext,
  load: { warmup: BenchEvent[]; measured: BenchEvent[]; perSecond: number },
): Promise<LatencyResult> {
  const { db, queue, s4 } = ctx;
  const service = await startServiceProcess({
    env: ctx.serviceEnv,
    logFile: ctx.logFile,
    nodeArgs: ctx.nodeArgs,
  });
  let complete = false;
  let stopped: { peakRssBytes: number };
  const callsBefore = s4Calls(s4, load.measured);
  const requestsBefore = s4.requests();
  const commitsBefore = await commitsSoFar(db);
  let first = 0;
  let backendCpu = 0;
  let metrics = '';
  try {
    await service.ready();
    const base = await processedCount(db);
    await ctx.publisher.publishSteadily(queue.address, load.warmup, load.perSecond);
    await waitFor(async () => (await processedCount(db)) >= base + load.warmup.length, ctx.timeoutMs);
    // Each scrape resets the service's event-loop delay histogram: the next one covers the measured window.
    await service.metrics();
    first = Date.now();
    await ctx.publisher.publishSteadily(queue.address, load.measured, load.perSecond);
    const expected = base + load.warmup.length + load.measured.length;
    complete = await waitFor(async () => (await processedCount(db)) >= expected, ctx.timeoutMs);
    backendCpu = await databaseCpu(db);
    metrics = await service.metrics();
  } finally {
    stopped = await service.stop();
    await sleep(600);
    await queue.purge();
  }
  const commits = (await commitsSoFar(db)) - commitsBefore;
  const times = await commitTimes(
    db,
    load.measured.map((event) => event.id),
  );
  const latencies: number[] = [];
  let last = first;
  for (const event of load.measured) {
    const committed = times.get(event.id);
    if (committed === undefined || event.publishedAt === undefined) continue;
    latencies.push(committed - event.publishedAt);
    last = Math.max(last, committed);
  }
  latencies.sort((a, b) => a - b);
  const done = latencies.length;
  return {
    events: done,
    eventsPerSecond: done / ((last - first) / 1000),
    s4CallsPerEvent: (s4Calls(s4, load.measured) - callsBefore) / done,
    s4RequestsPerEvent: s4Requests(s4, load.measured, requestsBefore) / done,
    ...cpuFigures(service.cpu, first, last, done),
    databaseCpuSecondsPer1000: (backendCpu / (load.warmup.length + load.measured.length)) * 1000,
    commitsPerEvent: commits / (load.warmup.length + load.measured.length),
    s4ReadMeanMs: histogramMeanMs(metrics, 'fon_s4_request_duration_seconds'),
    handlingMeanMs: histogramMeanMs(metrics, 'fon_event_duration_seconds'),
    peakRssMb: stopped.peakRssBytes / 2 ** 20,
    complete,
    ...(await outcomes(db)),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    p999Ms: percentile(latencies, 0.999),
    maxMs: latencies[latencies.length - 1] ?? Number.NaN,
    eventLoopMaxDelayMs: gaugeValue(metrics, 'nodejs_eventloop_lag_max_seconds') * 1000,
  };
}
