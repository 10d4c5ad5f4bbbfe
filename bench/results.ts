// The shape of bench/results/*.json: every run's raw measurements. Medians, ranges and verdicts are computed
// from them when a table is written (targets.ts), never stored, so that they cannot disagree with the runs.

/** Marks results of the side-by-side benchmark; a file without it is from the benchmark it replaced. */
export const RESULTS_SCHEMA = 'side-by-side/1';

/** One consumer draining the load of one scenario. */
export interface DrainFigures {
  /** New events committed per second, from the marker's commit to the last new event's. */
  newPerSecond: number;
  newEvents: number;
  duplicates: number;
  /** HTTP requests the S/4HANA stand-in received for the measured orders, per new event. */
  s4RequestsPerNew: number;
  /** CPU of the consumer process per new event over the window, in ms. */
  cpuMsPerNew: number;
  /** VmHWM of the consumer process. */
  peakRssMb: number;
  /** Emails queued: one per order whose status changed. */
  mailsQueued: number;
}

export interface ScenarioRun {
  name: string;
  s4LatencyMs: number;
  pgDelayMs: number;
  service: DrainFigures;
  plain: DrainFigures;
}

export interface SteadyRun {
  perSecond: number;
  events: number;
  pgDelayMs: number;
  s4LatencyMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Service CPU per event over the window, in µs: untraced, and with every delivery traced. */
  cpuMicrosPerEvent: number;
  tracedCpuMicrosPerEvent: number;
  peakRssMb: number;
  tracedPeakRssMb: number;
}

export interface RunResult {
  run: number;
  loadAverageAtStart: number;
  scenarios: ScenarioRun[];
  steady?: SteadyRun;
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
  };
  runs: RunResult[];
  durationSeconds: number;
}

/** Whether `value` (a parsed results file) is a run of this benchmark. */
export function isSideBySide(value: unknown): value is BenchResults {
  return (value as { schema?: unknown } | null)?.schema === RESULTS_SCHEMA;
}
