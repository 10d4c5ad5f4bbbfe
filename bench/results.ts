// The shape of bench/results/*.json: every run's raw measurements. Medians, ranges and verdicts are computed
// from them when a table is written (targets.ts), never stored, so that they cannot disagree with the runs.

/** Marks results of the side-by-side benchmark; a file without it is from the benchmark it replaced. */
export const RESULTS_SCHEMA = 'side-by-side/2';

/** One consumer draining the load of one scenario. */
export interface DrainFigures {
  /** New events per second, from the marker's commit to the last new event's commit or email, the later. */
  newPerSecond: number;
  /**
   * New events per second to the last new event's commit, emails left out: where it is well above newPerSecond,
   * the emails, not the events, end the window. Absent in runs before it was measured.
   */
  committedPerSecond?: number;
  newEvents: number;
  duplicates: number;
  /** HTTP requests the S/4HANA stand-in received for the measured orders, per new event. */
  s4RequestsPerNew: number;
  /** CPU of the consumer process per new event over the window, in ms. */
  cpuMsPerNew: number;
  /**
   * CPU of every process on the machine per new event over the same window, the consumer's included: PostgreSQL,
   * RabbitMQ and the bench's publisher, stand-ins and relay are the rest. Absent in runs before it was measured.
   */
  machineCpuMsPerNew?: number;
  /** The machine's busy cores over the window: at the core count, the rate is bound by CPU. */
  machineBusyCores?: number;
  /** VmHWM of the consumer process. */
  peakRssMb: number;
  /** Emails queued (and sent): one per new event, each a change. */
  mailsQueued: number;
  /**
   * Through the relay (pgRelay.ts): the median of what it really held each chunk from the consumer over the
   * drain, in ms, beside its nominal delay. Absent when the consumer connects directly.
   */
  pgHeldMs?: number;
  /** Through the relay: the chunks the consumer wrote to PostgreSQL per message published (warm-up and duplicates included). */
  pgWritesPerEvent?: number;
  /** The service only, from pg_stat_statements over the drain: mean execution time per call, in ms. */
  statementMs?: { identityCheck: number; effect: number };
}

export interface ScenarioRun {
  name: string;
  s4LatencyMs: number;
  pgDelayMs: number;
  service: DrainFigures;
  plain: DrainFigures;
}

/**
 * Publish to commit in two parts: until the service took the message (the broker, the wire, the service's event
 * loop before the message reached its handler), then to the commit (the identity check, the read, waiting for
 * the turn's statement, the transaction). When the service took it comes from its "event processed" log line:
 * the line's time less the handling time it states.
 */
export interface LatencySplit {
  waitMs: number;
  toCommitMs: number;
}

/** Medians of the parts of publish to commit that a traced steady window's spans show (phases.ts, spanSplit). */
export interface SpanParts {
  toCheckMs: number;
  checkMs: number;
  toTransactionMs: number;
  transactionMs: number;
}

export interface SpanSplit {
  events: number;
  all: SpanParts;
  slowest: SpanParts;
}

export interface SteadyRun {
  perSecond: number;
  events: number;
  pgDelayMs: number;
  s4LatencyMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Where the time went (LatencySplit): medians of every event and of the slowest 1 %. */
  split?: { all: LatencySplit; slowest: LatencySplit };
  /** With --steady-traced only: every delivery traced, its spans taken apart. */
  spans?: SpanSplit;
  peakRssMb: number;
  /** The median of what the relay really held each chunk over the window, in ms (DrainFigures). */
  pgHeldMs?: number;
}

/** The service draining the same backlog of new events untraced, at the default sampling, and every delivery traced. */
export interface TracingRun {
  events: number;
  s4LatencyMs: number;
  pgDelayMs: number;
  /** Service CPU (user + system) per event over the drain, in µs; with pairs, the median of their untraced drains. */
  cpuMicrosPerEvent: number;
  /** Every delivery traced (OTEL_TRACES_SAMPLER_ARG=1). */
  tracedCpuMicrosPerEvent: number;
  /**
   * At the default sampling (parent-based, a ratio of 0.1); with pairs, the median of their sampled drains; absent
   * in runs before it was measured.
   */
  sampledCpuMicrosPerEvent?: number;
  /** Spans the sink received per event drained, at the default sampling and with every delivery traced. */
  spansPerEvent?: { sampled: number; every: number };
  /**
   * Untraced and sampled drains one right after the other, in µs per event, each pair in the other order than the
   * one before: what tracing at the default sampling costs is the median of the pairs' differences. Absent in runs
   * that drained each setting once.
   */
  pairs?: Array<{ offMicros: number; sampledMicros: number }>;
  peakRssMb: number;
  tracedPeakRssMb: number;
  sampledPeakRssMb?: number;
}

/**
 * The service draining the headline scenario's backlog against tables that already hold a full retention window
 * (fullWindow.ts), compared with its own rate on empty tables in the same run.
 */
export interface FullWindowRun {
  seeded: { processedEvents: number; sentMails: number; orders: number };
  s4LatencyMs: number;
  pgDelayMs: number;
  service: DrainFigures;
}

/** The service killed half-way through a backlog and started again (crashPhase.ts). */
export interface CrashRun {
  /** The credit window it ran with: `AMQP_PREFETCH=50`, or `default`. */
  window: string;
  events: number;
  recordedAtKill: number;
  /** Messages the broker delivered again after the kill. */
  redelivered: number;
  /** Of those, events committed before the kill: taken again as duplicates. */
  redeliveredAfterCommit: number;
}

export interface RunResult {
  run: number;
  loadAverageAtStart: number;
  scenarios: ScenarioRun[];
  steady?: SteadyRun;
  tracing?: TracingRun;
  fullWindow?: FullWindowRun;
}

export interface BenchResults {
  schema: typeof RESULTS_SCHEMA;
  startedAt: string;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGb: number;
    node: string;
    postgres: string;
  };
  settings: {
    runs: number;
    newEvents: number;
    orders: number;
    duplicates: number;
    plainPrefetch: number;
    steadyRate: number;
    steadySeconds: number;
    /** A lever measured alone: node flags and settings given to the service beside its defaults. */
    serviceOverrides?: { nodeArgs: string[]; env: Record<string, string>; cpus?: string };
    /** The steady window traced every delivery (--steady-traced), for where its time goes, not for its figures. */
    steadyTraced?: boolean;
    /** The relay offered no PIPELINING (--smtp-no-pipelining). */
    smtpPipelining?: false;
  };
  runs: RunResult[];
  /** Once per benchmark, at S/4HANA 50 ms and PostgreSQL +1 ms: one per window setting. */
  crashes: CrashRun[];
  durationSeconds: number;
}

/** Whether `value` (a parsed results file) is a run of this benchmark. */
export function isSideBySide(value: unknown): value is BenchResults {
  return (value as { schema?: unknown } | null)?.schema === RESULTS_SCHEMA;
}
