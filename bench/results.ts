// The shape of bench/results/*.json: every run's raw measurements, and the summary over the runs that the
// tables, the targets, the chart and the README are made from.
import type { BrokerCeiling } from './brokerCeiling.js';
import type { DatabaseCeiling } from './databaseCeiling.js';
import type { PairResult } from './pairedPhase.js';
import type { LatencyResult, PhaseResult } from './phases.js';
import type { Scenario } from './scenarios.js';

export interface CeilingResult {
  prefetch: number;
  /** The machine's cores, which the broker, the database and the service share. */
  cores: number;
  broker: BrokerCeiling;
  database: DatabaseCeiling;
  /**
   * Measured with the scenario that takes duplicates at this prefetch (its new events are the ones redelivered);
   * absent when no such scenario ran (`--only`).
   */
  databaseDuplicates?: DatabaseCeiling;
}

export interface ScenarioResult extends Scenario {
  unique: PhaseResult;
  /** Absent for a scenario without a duplicate phase (duplicateShare 0). */
  duplicates?: PhaseResult;
  mailsQueued: number;
  ordersInPortal: number;
  /** Orders whose latest state the portal's API holds (pushes done) when the scenario ended; 0 without `portal`. */
  portalPushesDone?: number;
}

/** One pass over every scenario, each prefetch's ceilings measured right before its scenarios. */
export interface RunResult {
  run: number;
  loadAverageAtStart: number;
  ceilings: CeilingResult[];
  scenarios: ScenarioResult[];
  /** What tracing costs, each setting measured as a pair (scenarios.ts, TRACING_PAIRS); by the pair's name. */
  pairs?: Record<string, PairResult>;
}

export type SteadyResult = LatencyResult & { perSecond: number; prefetch: number; s4LatencyMs: number };

/** A figure over the runs: the median, the range, and each run's value in run order. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export interface ScenarioSummary {
  name: string;
  s4LatencyMs: number;
  prefetch: number;
  figures: Record<string, Spread>;
}

export interface CeilingSummary {
  prefetch: number;
  figures: Record<string, Spread>;
}

export interface TargetResult {
  name: string;
  goal: string;
  /** The median over the runs, or the worst run for targets that must hold in every run. */
  value: number;
  min: number;
  max: number;
  met: boolean;
}

export interface BenchResults {
  startedAt: string;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGb: number;
    node: string;
    postgres: string;
    loadAverageAtStart: number;
    loadAverageAtEnd: number;
  };
  settings: {
    runs: number;
    events: number;
    /** The probe's database ceiling (new events/s) that sized `events`; absent when --events was given. */
    calibrationRate?: number;
    /** The probe's rate that gave every event (REFERENCE_RATE) when the run was sized. */
    referenceRate?: number;
    /** The events a run got at that rate and above (REFERENCE_EVENTS) when the run was sized. */
    referenceEvents?: number;
    duplicateShare: number;
    eventsPerOrder: number;
    poolSize: number;
    logLevel: string;
    overrides: Record<string, string>;
  };
  runs: RunResult[];
  steady: SteadyResult | undefined;
  summary: { scenarios: ScenarioSummary[]; ceilings: CeilingSummary[] };
  targets: TargetResult[];
  durationSeconds: number;
}
