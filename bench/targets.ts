// The figures over the runs (median and range of the per-run values) and the targets, judged from the runs each
// time a table is written. A target is set once: a miss is reported as missed, never met by redefining it. Issue
// 49's targets, and issue 40's that latency at 200 ms is hidden.
import type { BenchResults, RunResult, ScenarioRun } from './results.js';
import { HEADLINE, PG_DELAYS_MS, STEADY } from './scenarios.js';

export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

/** Median and range of the values measured (NaN ones, not measured, left out); all NaN when none was. */
export function spread(values: number[]): Spread {
  const measured = values.filter((v) => !Number.isNaN(v));
  const sorted = [...measured].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length === 0
      ? Number.NaN
      : sorted.length % 2 === 1
        ? (sorted[mid] as number)
        : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return {
    median,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    runs: measured,
  };
}

export function scenarioIn(run: RunResult, s4LatencyMs: number, pgDelayMs: number): ScenarioRun | undefined {
  return run.scenarios.find((s) => s.s4LatencyMs === s4LatencyMs && s.pgDelayMs === pgDelayMs);
}

/** One figure of one scenario over the runs; NaN in a run that did not measure it. */
export function scenarioFigure(
  runs: RunResult[],
  s4LatencyMs: number,
  pgDelayMs: number,
  value: (s: ScenarioRun) => number,
): Spread {
  return spread(
    runs.map((run) => {
      const s = scenarioIn(run, s4LatencyMs, pgDelayMs);
      return s === undefined ? Number.NaN : value(s);
    }),
  );
}

export const ratio = (s: ScenarioRun) => s.service.newPerSecond / s.plain.newPerSecond;

/** The service's own CPU per new event, email included, as a share of the plain consumer's in the same run. */
export const cpuShare = (s: ScenarioRun) => s.service.cpuMsPerNew / s.plain.cpuMsPerNew;

/**
 * What service ÷ plain would be at most if the service's own CPU were zero and the rest of the machine's work
 * stayed as measured: the service's rate scaled by the machine's CPU per new event over what is left of it
 * without the service's own. NaN without the machine's figures.
 */
export function ratioCeiling(s: ScenarioRun): number {
  const { service, plain } = s;
  const machine = service.machineCpuMsPerNew;
  if (machine === undefined) return Number.NaN;
  return (service.newPerSecond * machine) / (machine - service.cpuMsPerNew) / plain.newPerSecond;
}

/** The full-window drain's rate as a share of the service's empty-table rate in the same run and scenario. */
export function fullWindowShare(run: RunResult): number {
  const full = run.fullWindow;
  const empty = full && scenarioIn(run, full.s4LatencyMs, full.pgDelayMs);
  return full && empty ? full.service.newPerSecond / empty.service.newPerSecond : Number.NaN;
}

export interface Verdict {
  name: string;
  goal: string;
  /** What the goal is compared with: the median over the runs, or the largest value where every one must hold. */
  value: number;
  spread: Spread;
  /** Undefined when the figure was not measured in this run. */
  met: boolean | undefined;
}

interface Target {
  name: string;
  goal: string;
  holds(value: number): boolean;
  figure(runs: RunResult[]): Spread;
  judgeBy: 'median' | 'max';
}

/** How a scenario's PostgreSQL is named in the tables. */
export const postgresLabel = (pgDelayMs: number) => (pgDelayMs === 0 ? 'local' : `+${pgDelayMs} ms`);

const hiddenLatency = (pgDelayMs: number): Target => ({
  name: `service at S/4HANA 200 ms ÷ itself at 0 ms, PostgreSQL ${postgresLabel(pgDelayMs)}`,
  goal: '≥ 0.6',
  holds: (v) => v >= 0.6,
  figure: (runs) =>
    spread(
      runs.map((run) => {
        const slow = scenarioIn(run, 200, pgDelayMs);
        const fast = scenarioIn(run, 0, pgDelayMs);
        return slow && fast ? slow.service.newPerSecond / fast.service.newPerSecond : Number.NaN;
      }),
    ),
  judgeBy: 'median',
});

export const TARGETS: Target[] = [
  {
    name: `service ÷ plain consumer, S/4HANA ${HEADLINE.s4LatencyMs} ms, PostgreSQL +${HEADLINE.pgDelayMs} ms`,
    goal: '≥ 2.0',
    holds: (v) => v >= 2,
    figure: (runs) => scenarioFigure(runs, HEADLINE.s4LatencyMs, HEADLINE.pgDelayMs, ratio),
    judgeBy: 'median',
  },
  {
    name: 'service ÷ plain consumer, S/4HANA 0 ms, PostgreSQL +1 ms',
    goal: '≥ 2.0',
    holds: (v) => v >= 2,
    figure: (runs) => scenarioFigure(runs, 0, 1, ratio),
    judgeBy: 'median',
  },
  {
    name: 'service CPU ÷ plain consumer CPU per new event, email included, worst scenario of each run',
    goal: '≤ 0.5',
    holds: (v) => v <= 0.5,
    figure: (runs) =>
      spread(
        runs.map((run) => {
          const shares = run.scenarios.map(cpuShare).filter((v) => !Number.isNaN(v));
          return shares.length === 0 ? Number.NaN : Math.max(...shares);
        }),
      ),
    judgeBy: 'median',
  },
  {
    name: 'S/4HANA requests per new event, service, S/4HANA 50 ms (each PostgreSQL delay)',
    goal: '≤ 0.1',
    holds: (v) => v <= 0.1,
    // The worse of the two scenarios in each run.
    figure: (runs) =>
      spread(
        runs.map((run) => {
          const measured = PG_DELAYS_MS.flatMap(
            (pg) => scenarioIn(run, 50, pg)?.service.s4RequestsPerNew ?? [],
          );
          return measured.length === 0 ? Number.NaN : Math.max(...measured);
        }),
      ),
    judgeBy: 'median',
  },
  ...PG_DELAYS_MS.map(hiddenLatency),
  {
    name: 'peak RSS of the service, every scenario (MB)',
    goal: '< 200',
    holds: (v) => v < 200,
    figure: (runs) =>
      spread(
        runs.flatMap((run) => [
          ...run.scenarios.map((s) => s.service.peakRssMb),
          ...(run.steady ? [run.steady.peakRssMb] : []),
          ...(run.tracing
            ? [run.tracing.peakRssMb, run.tracing.tracedPeakRssMb, run.tracing.sampledPeakRssMb ?? Number.NaN]
            : []),
          ...(run.fullWindow ? [run.fullWindow.service.peakRssMb] : []),
        ]),
      ),
    judgeBy: 'max',
  },
  {
    name: `p99 publish to commit at a steady ${STEADY.perSecond} events/s, S/4HANA ${STEADY.s4LatencyMs} ms, PostgreSQL +${STEADY.pgDelayMs} ms (ms)`,
    goal: '< 50',
    holds: (v) => v < 50,
    // Only a window at the target's rate counts: a lighter one (--steady-rate) says nothing about it.
    figure: (runs) =>
      spread(runs.map((run) => (run.steady?.perSecond === STEADY.perSecond ? run.steady.p99Ms : Number.NaN))),
    judgeBy: 'median',
  },
  {
    name: 'service drain rate on a full retention window ÷ on empty tables, same run, S/4HANA 50 ms, PostgreSQL +1 ms',
    goal: '≥ 0.8',
    holds: (v) => v >= 0.8,
    figure: (runs) => spread(runs.map(fullWindowShare)),
    judgeBy: 'median',
  },
  {
    name: 'service CPU per event, tracing at the default sampling (parent-based, 0.1) − off, draining the same backlog (µs)',
    goal: '≤ 60',
    holds: (v) => v <= 60,
    figure: (runs) => spread(runs.map(samplingCost)),
    judgeBy: 'median',
  },
];

/**
 * What tracing at the default sampling cost a run, in µs per event: the median of its paired drains' differences,
 * or, in a run that drained each setting once, that one difference.
 */
export function samplingCost(run: RunResult): number {
  const tracing = run.tracing;
  if (tracing === undefined) return Number.NaN;
  if (tracing.pairs !== undefined && tracing.pairs.length > 0)
    return spread(tracing.pairs.map((pair) => pair.sampledMicros - pair.offMicros)).median;
  return tracing.sampledCpuMicrosPerEvent === undefined
    ? Number.NaN
    : tracing.sampledCpuMicrosPerEvent - tracing.cpuMicrosPerEvent;
}

export function judge(results: Pick<BenchResults, 'runs'>): Verdict[] {
  return TARGETS.map((target) => {
    const figure = target.figure(results.runs);
    const value = target.judgeBy === 'max' ? figure.max : figure.median;
    return {
      name: target.name,
      goal: target.goal,
      value,
      spread: figure,
      met: Number.isNaN(value) ? undefined : target.holds(value),
    };
  });
}
