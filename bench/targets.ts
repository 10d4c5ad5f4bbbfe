// The targets the results are held against (scenarios.ts TARGETS), and the bound a scenario's rate is compared to.
import type { BenchResults, CeilingResult } from './report.js';
import { type Scenario, TARGETS } from './scenarios.js';
import { round } from './stats.js';

export interface Target {
  name: string;
  goal: string;
  value: number;
  met: boolean;
}

/** The most events per second a scenario can reach: the database, or prefetch reads of `latency` at a time. */
export function pipelineBound(scenario: Scenario, ceiling: CeilingResult | undefined): number {
  const database = ceiling?.database.eventsPerSecond ?? Number.POSITIVE_INFINITY;
  if (scenario.s4LatencyMs === 0) return database;
  return Math.min(database, (scenario.prefetch * 1000) / scenario.s4LatencyMs);
}

export function evaluateTargets(results: BenchResults): Target[] {
  const targets: Target[] = [];
  const scenario = (latency: number, prefetch: number) =>
    results.scenarios.find((s) => s.s4LatencyMs === latency && s.prefetch === prefetch);
  const ceiling = (prefetch: number) => results.ceilings.find((c) => c.prefetch === prefetch);
  const fast = scenario(0, 100);
  if (fast !== undefined) {
    targets.push({
      name: 'new events/s, S/4HANA 0 ms, prefetch 100',
      goal: `>= ${TARGETS.uniqueEventsPerSecond}`,
      value: round(fast.unique.eventsPerSecond, 0),
      met: fast.unique.eventsPerSecond >= TARGETS.uniqueEventsPerSecond,
    });
    const db = ceiling(100)?.database.eventsPerSecond;
    if (db !== undefined) {
      const share = fast.unique.eventsPerSecond / db;
      targets.push({
        name: 'same, as a share of the database ceiling',
        goal: `>= ${TARGETS.uniqueShareOfDatabaseCeiling}`,
        value: round(share, 2),
        met: share >= TARGETS.uniqueShareOfDatabaseCeiling,
      });
    }
  }
  const pipelined = scenario(50, 100);
  if (pipelined !== undefined) {
    targets.push({
      name: 'new events/s, S/4HANA 50 ms, prefetch 100',
      goal: `>= ${TARGETS.pipelinedEventsPerSecond}`,
      value: round(pipelined.unique.eventsPerSecond, 0),
      met: pipelined.unique.eventsPerSecond >= TARGETS.pipelinedEventsPerSecond,
    });
  }
  if (fast !== undefined) {
    targets.push({
      name: 'duplicates/s, prefetch 100',
      goal: `>= ${TARGETS.duplicateEventsPerSecond}`,
      value: round(fast.duplicates.eventsPerSecond, 0),
      met: fast.duplicates.eventsPerSecond >= TARGETS.duplicateEventsPerSecond,
    });
  }
  if (results.scenarios.length > 0) {
    const calls = Math.max(
      ...results.scenarios.map((s) => s.duplicates.s4CallsPerEvent * s.duplicates.events),
    );
    targets.push({
      name: 'S/4HANA calls for duplicates, all scenarios',
      goal: '= 0',
      value: calls,
      met: calls === 0,
    });
  }
  if (results.steady !== undefined) {
    targets.push({
      name: `p99 publish to commit at ${results.steady.perSecond} events/s, S/4HANA 0 ms (ms)`,
      goal: `< ${TARGETS.steadyP99Ms}`,
      value: round(results.steady.p99Ms, 1),
      met: results.steady.p99Ms < TARGETS.steadyP99Ms,
    });
  }
  const rss = [
    ...results.scenarios.flatMap((s) => [s.unique.peakRssMb, s.duplicates.peakRssMb]),
    ...(results.steady ? [results.steady.peakRssMb] : []),
  ];
  if (rss.length > 0) {
    const peak = Math.max(...rss);
    targets.push({
      name: 'peak RSS of the service, all runs (MB)',
      goal: `< ${TARGETS.peakRssMb}`,
      value: round(peak, 0),
      met: peak < TARGETS.peakRssMb,
    });
  }
  return targets;
}
