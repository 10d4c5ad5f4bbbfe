// What the benchmark runs, and how many events each part gets. A run of the default 20,000 events would take
// 20,000 × 50 ms = 1,000 s at prefetch 1 with 50 ms S/4HANA latency, so each scenario gets a share of the
// events sized to take a few seconds at the rate it can reach; the shares are fixed, so runs compare.
// Duplicates are cheap (several thousand a second), so their shares exceed 1: a window of a second or less is
// moved by tens of percent by one pause, and a ratio over such a window does not reproduce. A duplicate is
// settled before anything reads S/4HANA, so its rate depends on the prefetch alone: duplicates are measured in
// the plain 0 ms scenario of each prefetch, and the others (duplicateShare 0) spend their time on new events.
// At prefetch 1 a share of 1 already lasts about 6 s (a duplicate there waits a round trip per message); with 2
// its phase and its ceiling's took a fifth of the whole benchmark.
// A scenario is one entry here: run.ts measures it, the tables, the chart and the README list it. Within a
// prefetch they run in this order after the ceilings: those compared with the database ceiling first, so that
// they see the machine it saw; those bounded by prefetch ÷ S/4HANA latency after them.

import type { PairLoad } from './pairedPhase.js';

/** Local receivers a scenario may point the service at. */
export interface BenchSinks {
  /** An OTLP/HTTP trace receiver (otlpSink.ts). */
  otlpUrl: string;
  /** The SDK's `destinations` with the S/4HANA stand-in and the portal stand-in as `PORTAL`. */
  portalDestinations: string;
}

export interface Scenario {
  name: string;
  s4LatencyMs: number;
  prefetch: number;
  /** Share of the run's new events (70 % of --events) this scenario publishes. */
  uniqueShare: number;
  /**
   * Multiple of the run's duplicates (30 % of --events) this scenario publishes, drawn from its new events;
   * 0: no duplicate phase.
   */
  duplicateShare: number;
  /** What sets this scenario apart from the plain one of its latency and prefetch; part of its name. */
  variant?: 'portal';
  /** Settings this scenario adds to the service's environment (e.g. the portal push). */
  env?: (sinks: BenchSinks) => Record<string, string>;
}

export const SCENARIOS: Scenario[] = [
  { name: 's4-0ms-prefetch-1', s4LatencyMs: 0, prefetch: 1, uniqueShare: 0.1, duplicateShare: 1 },
  { name: 's4-50ms-prefetch-1', s4LatencyMs: 50, prefetch: 1, uniqueShare: 0.005, duplicateShare: 0 },
  { name: 's4-0ms-prefetch-20', s4LatencyMs: 0, prefetch: 20, uniqueShare: 0.5, duplicateShare: 4 },
  { name: 's4-50ms-prefetch-20', s4LatencyMs: 50, prefetch: 20, uniqueShare: 0.1, duplicateShare: 0 },
  // Duplicates at prefetch 100 run fastest: a share of 5 gives them a window of a few seconds, long enough for their
  // ratio to the cores' bound to hold from one benchmark run to the next.
  { name: 's4-0ms-prefetch-100', s4LatencyMs: 0, prefetch: 100, uniqueShare: 0.75, duplicateShare: 5 },
  // The same load with each state pushed to the portal's API as well (PORTAL_DESTINATION set to the stand-in):
  // one more row in the effect's statement, and a claim and a booking after commit, on the same database.
  {
    name: 's4-0ms-prefetch-100-portal',
    s4LatencyMs: 0,
    prefetch: 100,
    uniqueShare: 0.75,
    duplicateShare: 0,
    env: (sinks) => ({ destinations: sinks.portalDestinations, PORTAL_DESTINATION: 'PORTAL' }),
    variant: 'portal',
  },
  { name: 's4-50ms-prefetch-100', s4LatencyMs: 50, prefetch: 100, uniqueShare: 0.25, duplicateShare: 0 },
  // A slow S/4HANA: the pipeline bound is prefetch ÷ latency = 500/s; batching is what lets the service near it.
  // A fifth of the events: a tenth, 616 on a slow machine, lasted about ten reads, and the pipeline filling and
  // emptying at either end weighed on the rate (218/s, against 295 to 310/s over 1,400 events).
  { name: 's4-200ms-prefetch-100', s4LatencyMs: 200, prefetch: 100, uniqueShare: 0.2, duplicateShare: 0 },
];

/** The prefetches the scenarios use, ascending: the ceilings are measured once per run at each. */
export function prefetchesOf(scenarios: Scenario[]): number[] {
  return [...new Set(scenarios.map((s) => s.prefetch))].sort((a, b) => a - b);
}

/** The scenario of one S/4HANA latency and prefetch, by the name it is listed under. */
export function scenarioName(s4LatencyMs: number, prefetch: number, variant?: string): string {
  return `s4-${s4LatencyMs}ms-prefetch-${prefetch}${variant === undefined ? '' : `-${variant}`}`;
}

/** What sets the scenario listed under `name` apart from the plain one of its latency and prefetch, if anything. */
export function variantOf(name: string): string | undefined {
  return SCENARIOS.find((s) => s.name === name)?.variant;
}

/**
 * What tracing costs, each measured as a pair (pairedPhase.ts): a service without tracing and one with these
 * settings, on the plain 0 ms, prefetch 100 load at the same time. In every run, every delivery traced (the default
 * sampler) at the steady latency window's rate, 200 events/s each: what tracing adds to an instance's CPU under
 * load. On request (`--only pair-traced,pair-sampled`), the same drained as fast as both can, where batching has
 * made an untraced event three to four times cheaper and tracing's own 0.1 ms or so per event weighs the most.
 */
export const TRACING_PAIRS: Array<{
  name: 'steady' | 'traced' | 'sampled';
  /** How the README and the printed tables name it. */
  label: string;
  load: PairLoad;
  onRequest?: true;
  env: (sinks: BenchSinks) => Record<string, string>;
}> = [
  {
    name: 'steady',
    label: 'every delivery traced, 200 events/s each',
    load: { kind: 'steady', perSecond: 200, seconds: 25 },
    env: (sinks) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: sinks.otlpUrl }),
  },
  {
    name: 'traced',
    label: 'every delivery traced, draining',
    load: { kind: 'drain' },
    onRequest: true,
    env: (sinks) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: sinks.otlpUrl }),
  },
  {
    name: 'sampled',
    label: 'one delivery in ten traced, draining',
    load: { kind: 'drain' },
    onRequest: true,
    env: (sinks) => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: sinks.otlpUrl,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    }),
  },
];

/**
 * Events each side of a draining pair takes, as a share of the run's new events: as many as the plain scenario.
 * Both sides share the machine, so each drains at about half its rate; at 0.375 a side the windows lasted about
 * three seconds, in which the traced side's warm-up weighed (one in ten read 1.6 in a single run).
 */
export const PAIR_SHARE = 0.75;

/** Warm-up before the measured events: a tenth of them, at most 500, at least 5. */
export function warmupCount(measured: number): number {
  return Math.max(5, Math.min(500, Math.ceil(measured / 10)));
}
