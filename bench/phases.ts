// One measurement each: a consumer (the service or the plain one, a child process) drains a pre-loaded queue, or
// the service takes events published at a steady rate. Rates and CPU are taken between commit timestamps
// (PostgreSQL's, probes.ts; the machine's clock like the publisher's), so that starting, connecting and warming
// up are not counted. Afterwards each phase checks the contract: every event recorded, and once; in a drain, one
// email queued and sent per new event.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { S4Server } from '../sandbox/s4Server.js';
import type { TestQueue } from '../test/support/broker.js';
import type { BenchDatabase } from './infrastructure.js';
import type { ExportedSpan, OtlpSink } from './otlpSink.js';
import type { PgRelay } from './pgRelay.js';
import type { ConsumerProcess } from './plain/process.js';
import {
  commitTimes,
  EMPTY_TABLES,
  type EventTable,
  type MailTable,
  mails,
  recordedCount,
  resetStatements,
  type Since,
  statementTimes,
} from './probes.js';
import { machineCpuSeconds, sampleCpu } from './processStats.js';
import type { BenchPublisher } from './publisher.js';
import type { DrainFigures, LatencySplit, SpanParts, SpanSplit } from './results.js';
import { percentile } from './stats.js';
import { spread } from './targets.js';
import type { BenchEvent } from './workload.js';

export interface PhaseContext {
  db: BenchDatabase;
  queue: TestQueue;
  publisher: BenchPublisher;
  s4: S4Server;
  timeoutMs: number;
}

/** Which consumer a phase runs, and where it records events and queues mail. */
export interface ConsumerUnderTest {
  start(): Promise<ConsumerProcess>;
  events: EventTable;
  mails: MailTable;
  logFile: string;
  /** The relay between the consumer and PostgreSQL, if any: what it really held is reported. */
  relay?: PgRelay | undefined;
  /** Rows already in the tables that the phase leaves out of its counts; by default none. */
  since?: Since;
}

/** Polls until `done` holds or the time is up; returns whether it held. */
export async function waitFor(done: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
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

/** Throws unless exactly `expected` events are recorded and each of `ids` among them: nothing lost, none twice. */
export async function checkRecorded(
  db: BenchDatabase,
  table: EventTable,
  ids: string[],
  expected: number,
  log: string,
  since = EMPTY_TABLES,
) {
  const recorded = await recordedCount(db, table, since);
  const found = (await commitTimes(db, table, ids)).size;
  if (recorded !== expected || found !== ids.length) {
    throw new Error(
      `${table} holds ${recorded} events (${found} of ${ids.length} measured) where ${expected} were sent; see ${log}`,
    );
  }
}

/**
 * Pre-loads the queue with `warmup`, a marker, then `measured` (new events with duplicates among them), and
 * starts the consumer. Every new event is a change with its email (workload.ts). The window runs from the marker's
 * commit to the last new event's commit or the last email's marking as sent, whichever is later: the work is done
 * when the emails are out. The phase ends when every new event is recorded, every email sent and the queue holds
 * nothing, duplicates included.
 */
export async function drainPhase(
  ctx: PhaseContext,
  consumer: ConsumerUnderTest,
  load: { warmup: BenchEvent[]; marker: BenchEvent; measured: BenchEvent[] },
): Promise<DrainFigures> {
  const { db, queue, s4 } = ctx;
  const all = [...load.warmup, load.marker, ...load.measured];
  const newIds = [...new Set(load.measured.map((event) => event.id))];
  const expected = load.warmup.length + 1 + newIds.length;
  const expectedMails = load.warmup.length + newIds.length;
  const since = consumer.since ?? EMPTY_TABLES;
  const service = consumer.events === 'processed_event';
  await ctx.publisher.publish(queue.address, all);
  const requestsBefore = s4.requests();
  consumer.relay?.takeHeldMs();
  if (service) await resetStatements(db);
  const machine = sampleCpu({ machine: machineCpuSeconds });
  const running = await consumer.start();
  let stopped: { peakRssBytes: number };
  try {
    // The broker's count comes last: each asks rabbitmqctl, a process whose start costs the consumer CPU.
    const done = await waitFor(
      async () =>
        (await recordedCount(db, consumer.events, since)) >= expected &&
        (await mails(db, consumer.mails, since)).sent >= expectedMails &&
        (await queue.isIdle()),
      ctx.timeoutMs,
    );
    if (!done) {
      const recorded = await recordedCount(db, consumer.events, since);
      const mailed = await mails(db, consumer.mails, since);
      const idle = await queue.isIdle();
      throw new Error(
        `the queue was not drained in ${ctx.timeoutMs} ms: ${recorded} of ${expected} events recorded, ` +
          `${mailed.sent} of ${expectedMails} emails sent (${mailed.queued} queued), ` +
          `queue ${idle ? 'idle' : 'not idle'}; see ${consumer.logFile}`,
      );
    }
  } finally {
    stopped = await running.stop();
    machine.stop();
    await sleep(600);
    await queue.purge();
  }
  const held = consumer.relay?.takeHeldMs();
  const statements = service ? await statementTimes(db) : undefined;
  await checkRecorded(db, consumer.events, newIds, expected, consumer.logFile, since);
  const mailed = await mails(db, consumer.mails, since);
  if (mailed.queued !== expectedMails || mailed.sent !== expectedMails) {
    throw new Error(
      `${mailed.queued} emails queued and ${mailed.sent} sent for ${expectedMails} changes; see ${consumer.logFile}`,
    );
  }
  const times = await commitTimes(db, consumer.events, [load.marker.id, ...newIds]);
  const start = times.get(load.marker.id) ?? Number.NaN;
  const lastCommit = Math.max(...newIds.map((id) => times.get(id) ?? Number.NaN));
  const end = Math.max(mailed.lastSentMs, lastCommit);
  if (!(end > start)) throw new Error(`no measurable window; see ${consumer.logFile}`);
  return {
    newPerSecond: newIds.length / ((end - start) / 1000),
    committedPerSecond: newIds.length / ((lastCommit - start) / 1000),
    newEvents: newIds.length,
    duplicates: load.measured.length - newIds.length,
    s4RequestsPerNew: s4Requests(s4, load.measured, requestsBefore) / newIds.length,
    cpuMsPerNew: (running.cpu.between('service', start, end) * 1000) / newIds.length,
    machineCpuMsPerNew: (machine.between('machine', start, end) * 1000) / newIds.length,
    machineBusyCores: machine.between('machine', start, end) / ((end - start) / 1000),
    peakRssMb: stopped.peakRssBytes / 2 ** 20,
    mailsQueued: mailed.queued,
    ...(held === undefined
      ? {}
      : { pgHeldMs: spread(held).median, pgWritesPerEvent: held.length / all.length }),
    ...(statements === undefined ? {} : { statementMs: statements }),
  };
}

export interface SteadyFigures {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Where the time went, as medians: of every event, and of the slowest 1 % (at or above the p99). */
  split?: { all: LatencySplit; slowest: LatencySplit };
  spans?: SpanSplit;
  peakRssMb: number;
  pgHeldMs?: number;
}

/**
 * Starts the service on an empty queue, warms it up, then publishes `measured` at `perSecond` and reads each
 * event's latency from publish (the bench's clock) to the commit of its transaction (PostgreSQL's commit
 * timestamp, probes.ts; the same machine's clock).
 */
export async function steadyPhase(
  ctx: PhaseContext,
  consumer: ConsumerUnderTest,
  load: { warmup: BenchEvent[]; measured: BenchEvent[]; perSecond: number },
  traced?: Pick<OtlpSink, 'keepSpans' | 'takeSpans'>,
): Promise<SteadyFigures> {
  const { db, queue } = ctx;
  const running = await consumer.start();
  let stopped: { peakRssBytes: number };
  const expected = load.warmup.length + load.measured.length;
  try {
    await running.ready();
    consumer.relay?.takeHeldMs();
    await ctx.publisher.publishSteadily(queue.address, load.warmup, load.perSecond);
    await waitFor(
      async () => (await recordedCount(db, consumer.events)) >= load.warmup.length,
      ctx.timeoutMs,
    );
    traced?.keepSpans();
    await ctx.publisher.publishSteadily(queue.address, load.measured, load.perSecond);
    await waitFor(async () => (await recordedCount(db, consumer.events)) >= expected, ctx.timeoutMs);
  } finally {
    stopped = await running.stop();
    await sleep(600);
    await queue.purge();
  }
  const held = consumer.relay?.takeHeldMs();
  const ids = load.measured.map((event) => event.id);
  await checkRecorded(db, consumer.events, ids, expected, consumer.logFile);
  const times = await commitTimes(db, consumer.events, ids);
  const latencies = load.measured
    .map((event) => (times.get(event.id) as number) - (event.publishedAt ?? Number.NaN))
    .sort((a, b) => a - b);
  const p99Ms = percentile(latencies, 0.99);
  const split = latencySplit(load.measured, times, handledTimes(consumer.logFile), p99Ms);
  const spans = traced === undefined ? undefined : spanSplit(traced.takeSpans(), load.measured, times, p99Ms);
  return {
    p50Ms: percentile(latencies, 0.5),
    p99Ms,
    maxMs: latencies[latencies.length - 1] ?? Number.NaN,
    ...(split === undefined ? {} : { split }),
    ...(spans === undefined ? {} : { spans }),
    peakRssMb: stopped.peakRssBytes / 2 ** 20,
    ...(held === undefined ? {} : { pgHeldMs: spread(held).median }),
  };
}

/** The service's "event processed" lines: when each event's handling ended, and how long it took. */
function handledTimes(logFile: string): Map<string, { endMs: number; ms: number }> {
  const handled = new Map<string, { endMs: number; ms: number }>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"event processed"')) continue;
    const entry = JSON.parse(line) as { id?: string; time?: number; ms?: number };
    if (entry.id !== undefined && entry.time !== undefined && entry.ms !== undefined)
      handled.set(entry.id, { endMs: entry.time, ms: entry.ms });
  }
  return handled;
}

/** Publish to commit taken apart at the moment the service took each event (LatencySplit). */
function latencySplit(
  events: BenchEvent[],
  commits: Map<string, number>,
  handled: Map<string, { endMs: number; ms: number }>,
  p99Ms: number,
): { all: LatencySplit; slowest: LatencySplit } | undefined {
  const parts = events.flatMap((event) => {
    const commit = commits.get(event.id);
    const done = handled.get(event.id);
    if (commit === undefined || done === undefined || event.publishedAt === undefined) return [];
    const taken = done.endMs - done.ms;
    return [
      { total: commit - event.publishedAt, waitMs: taken - event.publishedAt, toCommitMs: commit - taken },
    ];
  });
  return parts.length === 0 ? undefined : medians(parts, ['waitMs', 'toCommitMs'], p99Ms);
}

/**
 * A traced steady window's events taken apart by their spans, as medians of every event and of the slowest 1 %:
 * from taking the message to its identity check, the check, from the check to the transaction (the read, and the
 * wait for the turn's shared statement), and the transaction to its commit.
 */
function spanSplit(
  spans: ExportedSpan[],
  events: BenchEvent[],
  commits: Map<string, number>,
  p99Ms: number,
): SpanSplit | undefined {
  const byTrace = new Map<string, ExportedSpan[]>();
  for (const span of spans) {
    const trace = byTrace.get(span.traceId);
    if (trace === undefined) byTrace.set(span.traceId, [span]);
    else trace.push(span);
  }
  const rootOf = new Map(
    spans.filter((s) => s.name === 'process event' && s.eventId !== undefined).map((s) => [s.eventId, s]),
  );
  const parts = events.flatMap((event) => {
    const root = rootOf.get(event.id);
    const commit = commits.get(event.id);
    if (root === undefined || commit === undefined || event.publishedAt === undefined) return [];
    const trace = byTrace.get(root.traceId) ?? [];
    const check = trace.find((s) => s.name === 'identity check');
    const transaction = trace.find((s) => s.name === 'transaction');
    if (check === undefined || transaction === undefined) return [];
    return [
      {
        total: commit - event.publishedAt,
        toCheckMs: check.startMs - root.startMs,
        checkMs: check.endMs - check.startMs,
        toTransactionMs: transaction.startMs - check.endMs,
        transactionMs: transaction.endMs - transaction.startMs,
      },
    ];
  });
  if (parts.length === 0) return undefined;
  const keys: Array<keyof SpanParts> = ['toCheckMs', 'checkMs', 'toTransactionMs', 'transactionMs'];
  return { events: parts.length, ...medians(parts, keys, p99Ms) };
}

/** Each part's median over every event and over the slowest 1 % (publish to commit at or above the p99). */
function medians<K extends string>(
  parts: Array<{ total: number } & Record<K, number>>,
  keys: K[],
  p99Ms: number,
): { all: Record<K, number>; slowest: Record<K, number> } {
  const of = (list: typeof parts) =>
    Object.fromEntries(keys.map((key) => [key, spread(list.map((p) => p[key])).median])) as Record<K, number>;
  return { all: of(parts), slowest: of(parts.filter((p) => p.total >= p99Ms)) };
}
