// The figures reported for each scenario and each ceiling, as data: a figure is one entry here, computed for
// every run and summarised over the runs as median and range. A ratio to a ceiling is taken within one run
// (the service and its ceiling saw the same machine) and only then summarised: the median of per-run ratios.

import type { DatabaseCeiling } from './databaseCeiling.js';
import type { PhaseResult } from './phases.js';
import type {
  CeilingResult,
  CeilingSummary,
  RunResult,
  ScenarioResult,
  ScenarioSummary,
  Spread,
} from './results.js';
import { type Scenario, TRACING_PAIRS } from './scenarios.js';

export interface ScenarioFigure {
  key: string;
  label: string;
  /** Which printed table shows it: throughput and its bounds (with the range), or the costs (medians). */
  table: 'throughput' | 'cost';
  value(scenario: ScenarioResult, ceiling: CeilingResult): number;
}

export interface CeilingFigure {
  key: string;
  label: string;
  value(ceiling: CeilingResult): number;
}

/**
 * The most events per second this machine allows when each needs both ceilings' work: its cores ÷ the busy CPU
 * per event of the broker ceiling and of `database` added. The service does at least both for every event (it
 * receives and settles it, then runs the same handler), on the same cores, so no service can go faster, however
 * far each ceiling alone goes with the machine to itself. Infinite for runs made before the ceilings' CPU was
 * recorded.
 */
export function machineBound(ceiling: CeilingResult, database: DatabaseCeiling): number {
  const perEvent = (ceiling.broker.machineCpuSecondsPer1000 + database.machineCpuSecondsPer1000) / 1000;
  return perEvent > 0 ? ceiling.cores / perEvent : Number.POSITIVE_INFINITY;
}

/**
 * The most new events per second a scenario can reach: the lowest of the broker ceiling, the database ceiling,
 * the machine's cores for both, and prefetch reads of `latency` at a time.
 */
export function pipelineBound(scenario: Scenario, ceiling: CeilingResult): number {
  const reads =
    scenario.s4LatencyMs === 0 ? Number.POSITIVE_INFINITY : (scenario.prefetch * 1000) / scenario.s4LatencyMs;
  return Math.min(
    ceiling.broker.messagesPerSecond,
    ceiling.database.eventsPerSecond,
    machineBound(ceiling, ceiling.database),
    reads,
  );
}

/**
 * The most duplicates per second: the lowest of the broker ceiling, the database's, and the cores for both; NaN
 * where the duplicate ceiling was not measured.
 */
export function duplicateBound(ceiling: CeilingResult): number {
  return duplicateCeiling(ceiling, (d) =>
    Math.min(ceiling.broker.messagesPerSecond, d.eventsPerSecond, machineBound(ceiling, d)),
  );
}

/** A figure of the database's duplicate ceiling; NaN (shown as –) where it was not measured. */
function duplicateCeiling(ceiling: CeilingResult, value: (d: DatabaseCeiling) => number): number {
  return ceiling.databaseDuplicates === undefined ? Number.NaN : value(ceiling.databaseDuplicates);
}

/** A figure of the duplicate phase; NaN (shown as –) for a scenario without one. */
export function duplicate(s: ScenarioResult, value: (phase: PhaseResult) => number): number {
  return s.duplicates === undefined ? Number.NaN : value(s.duplicates);
}

/** The phases a scenario ran: new events, and duplicates where it has them. */
export function phasesOf(s: ScenarioResult): PhaseResult[] {
  return s.duplicates === undefined ? [s.unique] : [s.unique, s.duplicates];
}

export const SCENARIO_FIGURES: ScenarioFigure[] = [
  { key: 'newPerSecond', label: 'new events/s', table: 'throughput', value: (s) => s.unique.eventsPerSecond },
  {
    key: 'newShareOfDatabase',
    label: 'new × DB ceiling',
    table: 'throughput',
    value: (s, c) => s.unique.eventsPerSecond / c.database.eventsPerSecond,
  },
  {
    key: 'newShareOfBound',
    label: 'new × bound',
    table: 'throughput',
    value: (s, c) => s.unique.eventsPerSecond / pipelineBound(s, c),
  },
  {
    key: 'newShareOfBroker',
    label: 'new × broker',
    table: 'cost',
    value: (s, c) => s.unique.eventsPerSecond / c.broker.messagesPerSecond,
  },
  {
    key: 'duplicatesPerSecond',
    label: 'duplicates/s',
    table: 'throughput',
    value: (s) => duplicate(s, (d) => d.eventsPerSecond),
  },
  {
    key: 'duplicatesShareOfDatabase',
    label: 'dup × DB dup ceiling',
    table: 'throughput',
    value: (s, c) => duplicate(s, (d) => d.eventsPerSecond / duplicateCeiling(c, (dc) => dc.eventsPerSecond)),
  },
  {
    key: 'duplicatesShareOfBound',
    label: 'dup × bound',
    table: 'throughput',
    value: (s, c) => duplicate(s, (d) => d.eventsPerSecond / duplicateBound(c)),
  },
  {
    key: 's4RequestsPerNew',
    label: 'S/4HANA requests per new event',
    table: 'throughput',
    value: (s) => s.unique.s4RequestsPerEvent,
  },
  {
    key: 's4ReadsPerNew',
    label: 'S/4HANA orders read per new event',
    table: 'throughput',
    value: (s) => s.unique.s4CallsPerEvent,
  },
  {
    key: 's4KeysPerRequest',
    label: 'orders per S/4HANA request',
    table: 'throughput',
    value: (s) =>
      s.unique.s4RequestsPerEvent > 0 ? s.unique.s4CallsPerEvent / s.unique.s4RequestsPerEvent : 0,
  },
  {
    key: 's4CallsForDuplicates',
    label: 'S/4HANA calls for duplicates',
    table: 'throughput',
    value: (s) => duplicate(s, (d) => d.s4CallsPerEvent * d.events),
  },
  { key: 's4ReadMs', label: 'S/4HANA read ms', table: 'cost', value: (s) => s.unique.s4ReadMeanMs },
  { key: 'handlingMs', label: 'handling ms', table: 'cost', value: (s) => s.unique.handlingMeanMs },
  // CPU seconds per 1,000 events are CPU milliseconds per event.
  {
    key: 'serviceCpuMsPerNew',
    label: 'service CPU ms/new',
    table: 'cost',
    value: (s) => s.unique.cpuSecondsPer1000,
  },
  {
    key: 'serviceCpuMsPerDuplicate',
    label: 'service CPU ms/dup',
    table: 'cost',
    value: (s) => duplicate(s, (d) => d.cpuSecondsPer1000),
  },
  {
    key: 'databaseCpuMsPerNew',
    label: 'PostgreSQL CPU ms/new',
    table: 'cost',
    value: (s) => s.unique.databaseCpuSecondsPer1000,
  },
  {
    key: 'brokerCpuMsPerNew',
    label: 'RabbitMQ CPU ms/new',
    table: 'cost',
    value: (s) => s.unique.brokerCpuSecondsPer1000,
  },
  { key: 'commitsPerNew', label: 'PG commits/new', table: 'cost', value: (s) => s.unique.commitsPerEvent },
  { key: 'machineBusyNew', label: 'machine busy, new', table: 'cost', value: (s) => s.unique.machineBusy },
  { key: 'newEvents', label: 'n new', table: 'cost', value: (s) => s.unique.events },
  { key: 'duplicateEvents', label: 'n dup', table: 'cost', value: (s) => duplicate(s, (d) => d.events) },
  {
    key: 'peakRssMb',
    label: 'peak RSS MB',
    table: 'throughput',
    value: (s) => Math.max(...phasesOf(s).map((phase) => phase.peakRssMb)),
  },
];

export const CEILING_FIGURES: CeilingFigure[] = [
  { key: 'brokerPerSecond', label: 'broker msg/s', value: (c) => c.broker.messagesPerSecond },
  { key: 'databaseNewPerSecond', label: 'DB new ev/s', value: (c) => c.database.eventsPerSecond },
  { key: 'databaseNewP50Ms', label: 'DB p50 ms', value: (c) => c.database.p50Ms },
  { key: 'databaseNewP99Ms', label: 'DB p99 ms', value: (c) => c.database.p99Ms },
  {
    key: 'databaseCpuMsPerNew',
    label: 'PG CPU ms/new',
    value: (c) => c.database.databaseCpuSecondsPer1000,
  },
  {
    key: 'databaseDuplicatesPerSecond',
    label: 'DB dup ev/s',
    value: (c) => duplicateCeiling(c, (d) => d.eventsPerSecond),
  },
  {
    key: 'machineNewPerSecond',
    label: 'cores new ev/s',
    value: (c) => machineBound(c, c.database),
  },
  {
    key: 'machineDuplicatesPerSecond',
    label: 'cores dup ev/s',
    value: (c) => duplicateCeiling(c, (d) => machineBound(c, d)),
  },
];

/** Median (the mean of the middle two for an even count), range and the values in run order. */
export function spread(values: number[]): Spread {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: values };
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, runs: values };
}

/** The ceilings of `prefetch` measured in the same run as the scenario. */
export function ceilingOf(run: RunResult, prefetch: number): CeilingResult {
  const ceiling = run.ceilings.find((c) => c.prefetch === prefetch);
  if (ceiling === undefined) throw new Error(`run ${run.run} has no ceilings at prefetch ${prefetch}`);
  return ceiling;
}

export function summarize(runs: RunResult[]): { scenarios: ScenarioSummary[]; ceilings: CeilingSummary[] } {
  const names = [...new Set(runs.flatMap((run) => run.scenarios.map((s) => s.name)))];
  const scenarios = names.map((name) => {
    const measured = runs.flatMap((run) =>
      run.scenarios.filter((s) => s.name === name).map((s) => ({ s, c: ceilingOf(run, s.prefetch) })),
    );
    const first = (measured[0] as { s: ScenarioResult }).s;
    const figures = Object.fromEntries(
      SCENARIO_FIGURES.map((f) => [f.key, spread(measured.map(({ s, c }) => f.value(s, c)))]),
    );
    return { name, s4LatencyMs: first.s4LatencyMs, prefetch: first.prefetch, figures };
  });
  const prefetches = [...new Set(runs.flatMap((run) => run.ceilings.map((c) => c.prefetch)))];
  const ceilings = prefetches.map((prefetch) => {
    const measured = runs.map((run) => ceilingOf(run, prefetch));
    const figures = Object.fromEntries(
      CEILING_FIGURES.map((f) => [f.key, spread(measured.map((c) => f.value(c)))]),
    );
    return { prefetch, figures };
  });
  return { scenarios, ceilings };
}

/** The tracing pairs measured in these runs, with their label and CPU ratio over the runs. */
export function measuredPairs(runs: RunResult[]): Array<{ label: string; ratio: Spread }> {
  return TRACING_PAIRS.map((pair) => ({
    label: pair.label,
    ratio: spread(runs.flatMap((run) => run.pairs?.[pair.name]?.cpuRatio ?? [])),
  })).filter(({ ratio }) => Number.isFinite(ratio.median));
}

/** One summarised figure; NaN-filled when the scenario or figure is missing (a run with --only). */
export function figureOf(summary: { figures: Record<string, Spread> } | undefined, key: string): Spread {
  return summary?.figures[key] ?? { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: [] };
}
