import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  generatedBlock,
  headlineSection,
  PERFORMANCE_DOC,
  PUBLISHED,
  performanceSection,
  README,
  readmeHeadline,
  withPerformanceSection,
} from '../../bench/performanceDocs.js';
import { headline, report, tracingLine } from '../../bench/report.js';
import {
  type BenchResults,
  type DrainFigures,
  RESULTS_SCHEMA,
  type RunResult,
  type ScenarioRun,
  type SteadyRun,
} from '../../bench/results.js';
import { scenarioName } from '../../bench/scenarios.js';
import { judge, ratioCeiling, spread } from '../../bench/targets.js';
import {
  type BenchEvent,
  changes,
  createOrders,
  eventsPerOrder,
  markerEvent,
  newEvents,
  randomSource,
  withDuplicates,
} from '../../bench/workload.js';
import type { SalesOrderState } from '../../sandbox/s4Server.js';

function drain(newPerSecond: number, more: Partial<DrainFigures> = {}): DrainFigures {
  return {
    newPerSecond,
    newEvents: 10_000,
    duplicates: 3_000,
    s4RequestsPerNew: 1,
    cpuMsPerNew: 1,
    peakRssMb: 150,
    mailsQueued: 8_000,
    ...more,
  };
}

function steadyRun(more: Partial<SteadyRun> = {}): SteadyRun {
  return {
    perSecond: 200,
    events: 12_000,
    pgDelayMs: 1,
    s4LatencyMs: 0,
    p50Ms: 5,
    p99Ms: 40,
    maxMs: 90,
    peakRssMb: 140,
    ...more,
  };
}

function scenario(
  s4LatencyMs: number,
  pgDelayMs: number,
  service: DrainFigures,
  plainRate: number,
): ScenarioRun {
  return {
    name: scenarioName(s4LatencyMs, pgDelayMs),
    s4LatencyMs,
    pgDelayMs,
    service,
    plain: drain(plainRate),
  };
}

function run(number: number, scenarios: ScenarioRun[], steady?: RunResult['steady']): RunResult {
  return { run: number, loadAverageAtStart: 1, scenarios, ...(steady && { steady }) };
}

function results(runs: RunResult[]): BenchResults {
  return {
    schema: RESULTS_SCHEMA,
    startedAt: '2030-01-02T03:04:05.000Z',
    machine: { cpus: 2, cpuModel: 'test CPU', memoryGb: 8, node: 'v24.0.0', postgres: '15.20' },
    settings: {
      runs: runs.length,
      newEvents: 10_000,
      orders: 8_000,
      duplicates: 3_000,
      plainPrefetch: 50,
      steadyRate: 200,
      steadySeconds: 60,
    },
    runs,
    crashes: [],
    durationSeconds: 100,
  };
}

const verdict = (r: Pick<BenchResults, 'runs'>, start: string) => {
  const found = judge(r).find((v) => v.name.startsWith(start));
  if (found === undefined) throw new Error(`no target "${start}"`);
  return found;
};

describe('the side-by-side figures and their targets', () => {
  it('gives a figure as the median of the runs with its range, leaving out runs that did not measure it', () => {
    expect(spread([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, runs: [3, 1, 2] });
    expect(spread([4, 1, Number.NaN, 2, 3]).median).toBe(2.5);
    expect(spread([Number.NaN]).median).toBeNaN();
  });

  it('judges the headline as the median of the per-run ratios of service to plain consumer', () => {
    const runs = [500, 900, 1000].map((rate, i) => run(i + 1, [scenario(50, 1, drain(rate), 400)]));
    const headline = verdict({ runs }, 'service ÷ plain consumer, S/4HANA 50 ms, PostgreSQL +1 ms');
    expect(headline.value).toBe(2.25);
    expect(headline.spread).toMatchObject({ min: 1.25, max: 2.5 });
    expect(headline.met).toBe(true);
    const slower = [700, 790, 900].map((rate, i) => run(i + 1, [scenario(50, 1, drain(rate), 400)]));
    expect(verdict({ runs: slower }, 'service ÷ plain consumer, S/4HANA 50 ms').met).toBe(false);
  });

  it('judges latency hidden at 200 ms against the service’s own 0 ms rate at the same PostgreSQL delay', () => {
    const runs = [run(1, [scenario(0, 0, drain(1000), 500), scenario(200, 0, drain(590), 240)])];
    expect(verdict({ runs }, 'service at S/4HANA 200 ms ÷ itself at 0 ms, PostgreSQL local')).toMatchObject({
      value: 0.59,
      met: false,
    });
    expect(
      verdict({ runs }, 'service at S/4HANA 200 ms ÷ itself at 0 ms, PostgreSQL +1 ms').met,
    ).toBeUndefined();
  });

  it('judges S/4HANA requests per new event at 50 ms on the worse PostgreSQL delay of each run', () => {
    const runs = [
      run(1, [
        scenario(50, 0, drain(600, { s4RequestsPerNew: 0.04 }), 300),
        scenario(50, 1, drain(600, { s4RequestsPerNew: 0.12 }), 300),
      ]),
    ];
    expect(verdict({ runs }, 'S/4HANA requests per new event')).toMatchObject({ value: 0.12, met: false });
  });

  it('judges peak RSS on the largest of every phase, tracing on the drained backlog, the steady window at its rate only', () => {
    const steady = steadyRun();
    const tracing = {
      events: 3_000,
      s4LatencyMs: 0,
      pgDelayMs: 1,
      cpuMicrosPerEvent: 1_500,
      tracedCpuMicrosPerEvent: 1_900,
      sampledCpuMicrosPerEvent: 1_580,
      peakRssMb: 150,
      tracedPeakRssMb: 205,
    };
    const runs = [{ ...run(1, [scenario(0, 1, drain(700), 400)], steady), tracing }];
    expect(verdict({ runs }, 'peak RSS')).toMatchObject({ value: 205, met: false });
    expect(verdict({ runs }, 'p99 publish to commit')).toMatchObject({ value: 40, met: true });
    // Tracing is judged at the default sampling; every delivery traced is reported without a target.
    expect(verdict({ runs }, 'service CPU per event, tracing at the default sampling')).toMatchObject({
      value: 80,
      met: false,
    });
    // Drained in pairs, a run's figure is the median of the pairs' differences, not the difference of medians.
    const pairs = [
      { offMicros: 1_500, sampledMicros: 1_540 },
      { offMicros: 1_700, sampledMicros: 1_720 },
      { offMicros: 1_400, sampledMicros: 1_700 },
    ];
    const paired = [{ ...runs[0], tracing: { ...tracing, pairs } } as RunResult];
    expect(verdict({ runs: paired }, 'service CPU per event, tracing')).toMatchObject({
      value: 40,
      met: true,
    });
    expect(tracingLine(results(paired))).toContain('in 3 pairs a run');
    expect(tracingLine(results(paired))).not.toContain('trace sink');
    const counted = [
      { ...runs[0], tracing: { ...tracing, spansPerEvent: { sampled: 0.54, every: 5.07 } } } as RunResult,
    ];
    expect(tracingLine(results(counted))).toContain(
      'The trace sink received 0.54 spans per event at the default sampling and 5.07 with every delivery traced.',
    );
    const { sampledCpuMicrosPerEvent: _, ...beforeSampling } = tracing;
    expect(
      verdict(
        { runs: [{ ...runs[0], tracing: beforeSampling } as RunResult] },
        'service CPU per event, tracing',
      ).met,
    ).toBeUndefined();
    // A lighter window says nothing about the latency at the target's rate.
    const lighter = [run(1, [], { ...steady, perSecond: 100, p99Ms: 10 })];
    expect(verdict({ runs: lighter }, 'p99 publish to commit').met).toBeUndefined();
  });

  it('judges CPU per new event on the scenario of each run where the service’s share of the plain consumer’s is largest', () => {
    const runs = [
      run(1, [
        scenario(0, 1, drain(700, { cpuMsPerNew: 1 }), 400),
        scenario(50, 1, drain(700, { cpuMsPerNew: 1.2 }), 400),
      ]),
      run(2, [scenario(0, 1, drain(700, { cpuMsPerNew: 0.4 }), 400)]),
      run(3, [scenario(0, 1, drain(700, { cpuMsPerNew: 0.5 }), 400)]),
    ].map((r) => ({
      ...r,
      scenarios: r.scenarios.map((s) => ({ ...s, plain: drain(400, { cpuMsPerNew: 2 }) })),
    }));
    expect(verdict({ runs }, 'service CPU ÷ plain consumer CPU per new event')).toMatchObject({
      value: 0.25,
      spread: { min: 0.2, max: 0.6 },
      met: true,
    });
  });

  it('judges the full-window drain against the service’s empty-table rate of the same run and scenario', () => {
    const fullWindow = (newPerSecond: number) => ({
      seeded: { processedEvents: 5_000_000, sentMails: 1_000_000, orders: 1_000_000 },
      s4LatencyMs: 50,
      pgDelayMs: 1,
      service: drain(newPerSecond),
    });
    const runs = [
      {
        ...run(1, [scenario(50, 1, drain(500), 250), scenario(0, 1, drain(900), 250)]),
        fullWindow: fullWindow(390),
      },
      { ...run(2, [scenario(50, 1, drain(400), 250)]), fullWindow: fullWindow(360) },
    ];
    const full = verdict({ runs }, 'service drain rate on a full retention window');
    expect(full.value).toBeCloseTo(0.84, 10);
    expect(full).toMatchObject({ spread: { min: 0.78, max: 0.9 }, met: true });
    expect(
      verdict({ runs: [runs[0] as RunResult] }, 'service drain rate on a full retention window').met,
    ).toBe(false);
  });

  it('prints the relay’s measured hold beside its nominal delay, and the headline’s ratio as the table computes it', () => {
    const runs = [400, 420, 430].map((plainRate, i) =>
      run(i + 1, [
        {
          ...scenario(50, 1, drain(840, { pgHeldMs: 2.4 + i / 10 }), plainRate),
          plain: drain(plainRate, { pgHeldMs: 3 }),
        },
      ]),
    );
    expect(report(results(runs))).toContain('| 2.5 (2.4–2.6) / 3 |');
    const steady = steadyRun({ pgHeldMs: 2.7 });
    expect(report(results([run(1, [], steady)]))).toContain(
      'PostgreSQL +1 ms (the relay held 2.7 ms per chunk), publish to commit',
    );
    const text = headline(results(runs));
    expect(text).toContain('PostgreSQL +1 ms (the relay held 2.5 ms per chunk)');
    expect(text).toContain('| the service at its defaults | 840 | 1 |');
    // The median of 2.1, 2 and 1.95, beside 840 ÷ 420.
    expect(text).toContain(
      'the median of the per-run ratios: 2 (1.95–2.1) in rate (the ratio of the median rates above is 2)',
    );
  });

  it('prints the rates to the last commit beside each other, the emails after it left out', () => {
    const runs = [
      run(1, [
        {
          ...scenario(0, 1, drain(600, { committedPerSecond: 1_100 }), 400),
          plain: drain(400, { committedPerSecond: 440 }),
        },
      ]),
    ];
    expect(report(results(runs))).toContain(
      'New events per second to the last commit, the emails after it left out: at S/4HANA 0 ms, PostgreSQL +1 ms, ' +
        'the service 1,100 against 440 (service ÷ plain 2.5).',
    );
    expect(report(results([run(1, [scenario(0, 1, drain(600), 400)])]))).not.toContain('to the last commit');
  });

  it('prints where the machine’s CPU went per new event, and the ratio left with the service’s own CPU at zero', () => {
    // The service: 600/s, 1 ms of its own of 2.5 ms of the machine's per new event; the plain consumer: 400/s.
    const service = drain(600, { cpuMsPerNew: 1, machineCpuMsPerNew: 2.5, machineBusyCores: 1.5 });
    const runs = [
      run(1, [
        {
          ...scenario(50, 1, service, 400),
          plain: drain(400, { cpuMsPerNew: 2, machineCpuMsPerNew: 4, machineBusyCores: 1.6 }),
        },
      ]),
    ];
    // Without its own 1 ms, the service's 600/s would be 600 × 2.5 ÷ 1.5 = 1,000/s: 2.5 times the plain 400.
    expect(ratioCeiling(runs[0]?.scenarios[0] as ScenarioRun)).toBeCloseTo(2.5);
    expect(report(results(runs))).toContain(
      'at S/4HANA 50 ms, PostgreSQL +1 ms, 2.5 ms in the service’s drain (the rest 1.5, 1.5 cores busy) against ' +
        '4 in the plain consumer’s (the rest 2, 1.6 cores busy), so service ÷ plain would be at most 2.5 with the ' +
        'service’s own CPU at zero.',
    );
    // Runs before the machine was measured print no such line.
    expect(report(results([run(1, [scenario(50, 1, drain(600), 400)])]))).not.toContain('machine’s CPU');
  });

  it('prints where the steady window’s time went, and names what a lever run set beside the defaults', () => {
    const steady = steadyRun({
      split: { all: { waitMs: 2, toCommitMs: 11 }, slowest: { waitMs: 10, toCommitMs: 64 } },
      spans: {
        events: 12_000,
        all: { toCheckMs: 0, checkMs: 6.5, toTransactionMs: 3, transactionMs: 9.5 },
        slowest: { toCheckMs: 0, checkMs: 37, toTransactionMs: 27, transactionMs: 34 },
      },
    });
    const traced = report(
      results([run(1, [scenario(50, 1, drain(840, { pgWritesPerEvent: 1.5 }), 400)], steady)]),
    );
    expect(traced).toContain('2 + 11 ms for the median event, 10 + 64 ms for the slowest 1 %.');
    expect(traced).toContain(
      '37 in it, 27 to the transaction (the read, the turn), 34 in it ms for the slowest 1 %',
    );
    expect(traced).toContain('| 1.5 / – |');
    const lever = results([run(1, [scenario(50, 1, drain(840), 400)])]);
    lever.settings.serviceOverrides = { nodeArgs: ['--max-semi-space-size=32'], env: {}, cpus: '1' };
    expect(report(lever)).toContain(
      'the service with --max-semi-space-size=32 on cores 1 alone beside its defaults',
    );
    expect(report(results([run(1, [scenario(50, 1, drain(840), 400)])]))).toContain(
      'the service at its defaults',
    );
  });

  it('shows every target as not measured when a run measured none of its figures', () => {
    const verdicts = judge({ runs: [] });
    expect(verdicts.length).toBeGreaterThanOrEqual(8);
    for (const v of verdicts) expect(v.met).toBeUndefined();
  });

  it('prints the side-by-side row and each verdict as computed', () => {
    const runs = [400, 420, 430].map((plainRate, i) => run(i + 1, [scenario(50, 1, drain(840), plainRate)]));
    const text = report(results(runs));
    expect(text).toContain('| 50 ms | +1 ms | 840 | 420 (400–430) | 2 (1.95–2.1) |');
    expect(text).toMatch(
      /\| service ÷ plain consumer, S\/4HANA 50 ms, PostgreSQL \+1 ms \| ≥ 2\.0 \| 2 \|.*\| met \|/,
    );
    expect(text).toMatch(
      /\| service ÷ plain consumer, S\/4HANA 0 ms, PostgreSQL \+1 ms \|.*\| not measured \|/,
    );
  });
});

describe('the benchmark load', () => {
  const ids = (events: BenchEvent[]) => events.map((event) => event.id);

  it('gives every order one new event before any gets a second, an order’s next a pass of others later', () => {
    const orders = Array.from({ length: 80 }, (_, i) => String(1000 + i));
    const events = newEvents(orders, 100, randomSource(1));
    expect(events).toHaveLength(100);
    expect(new Set(ids(events)).size).toBe(100);
    expect(events.slice(0, 80).map((event) => event.salesOrder)).toEqual(orders);
    expect(Math.max(...eventsPerOrder(events).values())).toBe(2);
    const lastSeen = new Map<string | undefined, number>();
    events.forEach((event, i) => {
      const last = lastSeen.get(event.salesOrder);
      // Every other order with a second event comes in between: never two of one order in one window.
      if (last !== undefined) expect(i - last).toBeGreaterThanOrEqual(20);
      lastSeen.set(event.salesOrder, i);
    });
  });

  it('has S/4HANA answer each event of an order with a state the fleet manager is told of, in order', () => {
    const [order] = createOrders(5000, 1);
    const states = changes(order as SalesOrderState, 3);
    expect(states.map((state) => state.requestedDeliveryDate)).toEqual([
      '2026-12-15',
      '2026-12-16',
      '2026-12-17',
    ]);
    const times = states.map((state) => Date.parse(state.lastChangeDateTime));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(times).size).toBe(3);
    expect(states.every((state) => state.salesOrder === order?.salesOrder)).toBe(true);
  });

  it('counts new events per order once, however often one is repeated', () => {
    const events = newEvents(['1', '2'], 3, randomSource(4));
    const load = [markerEvent(), ...withDuplicates(events, 5, randomSource(5), 1)];
    expect([...eventsPerOrder(load).values()].sort()).toEqual([1, 2]);
  });

  it('mixes in duplicates, each the same event again and at least the gap after its original', () => {
    const events = newEvents(['1', '2', '3', '4', '5', '6', '7', '8'], 10, randomSource(2));
    const load = withDuplicates(events, 30, randomSource(3), 4);
    expect(load).toHaveLength(40);
    const seen = new Set<BenchEvent>();
    for (const event of load) {
      if (!events.includes(event)) throw new Error('a duplicate that is no copy of a sent event');
      if (seen.has(event)) {
        // The originals sent before this repeat: at least the gap's worth after its own.
        expect(seen.size - events.indexOf(event)).toBeGreaterThan(4);
        continue;
      }
      // Originals keep their order; a repeat is only ever of one already sent.
      expect(events.indexOf(event)).toBe(seen.size);
      seen.add(event);
    }
  });

  it('refuses a load too short for the gap', () => {
    const events = newEvents(['1', '2'], 3, randomSource(4));
    expect(() => withDuplicates(events, 1, randomSource(5), 3)).toThrow(/no room/);
  });
});

describe('published benchmark figures', () => {
  const published: unknown = JSON.parse(readFileSync(PUBLISHED, 'utf8'));

  it('docs/performance.md shows exactly the figures of the JSON its generated block names', () => {
    const { block, source } = generatedBlock(readFileSync(PERFORMANCE_DOC, 'utf8'));
    const named: unknown = JSON.parse(readFileSync(new URL(`../../${source}`, import.meta.url), 'utf8'));
    // After changing what the block shows: npm run bench:docs -- <that JSON>
    expect(block, `docs/performance.md out of step: npm run bench:docs -- ${source}`).toBe(
      performanceSection(named, source),
    );
  });

  it('the README’s headline shows exactly the figures of the published JSON, its ratio as the table computes it', () => {
    // After changing what the headline shows: npm run bench:docs -- bench/results/published.json
    expect(readmeHeadline(readFileSync(README, 'utf8'))).toBe(headlineSection(published));
  });

  it('says plainly that no side-by-side run is published while the JSON is of the earlier benchmark', () => {
    const earlier = { startedAt: '2026-12-04T15:32:00.000Z', runs: [] };
    const block = performanceSection(earlier);
    expect(block).toContain('No run of the side-by-side benchmark is published yet');
    expect(block.match(/\| not measured \|/g)).toHaveLength(judge({ runs: [] }).length);
  });

  it('replaces only the generated block of a document, and refuses a document without one', () => {
    const doc = ['# Performance', 'method by hand', performanceSection(published), 'bounds by hand'].join(
      '\n',
    );
    const replaced = withPerformanceSection(doc, results([run(1, [scenario(50, 1, drain(840), 420)])]));
    expect(replaced.startsWith('# Performance\nmethod by hand\n')).toBe(true);
    expect(replaced.endsWith('\nbounds by hand')).toBe(true);
    expect(replaced).toContain('Run of 2030-01-02');
    expect(replaced).not.toContain('No run of the side-by-side benchmark');
    expect(() => withPerformanceSection('# Performance\nno block', published)).toThrow(/bench:begin/);
  });
});
