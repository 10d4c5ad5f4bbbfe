import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventsFor, eventsSized, REFERENCE_EVENTS, REFERENCE_RATE } from '../../bench/calibration.js';
import { renderChart } from '../../bench/chart.js';
import { compareRuns, compareTargets } from '../../bench/compare.js';
import { spread, summarize } from '../../bench/figures.js';
import {
  generatedBlock,
  PERFORMANCE_DOC,
  PUBLISHED,
  performanceSection,
  showJudged,
  withPerformanceSection,
} from '../../bench/performanceDocs.js';
import type { PhaseResult } from '../../bench/phases.js';
import type { BenchResults, CeilingResult, RunResult, ScenarioResult } from '../../bench/results.js';
import { SCENARIOS, scenarioName } from '../../bench/scenarios.js';
import { showSpread } from '../../bench/stats.js';
import { evaluateTargets } from '../../bench/targets.js';

function phase(eventsPerSecond: number, extra: Partial<PhaseResult> = {}): PhaseResult {
  return {
    events: 1000,
    eventsPerSecond,
    s4CallsPerEvent: 0,
    s4RequestsPerEvent: 0,
    cpuSecondsPer1000: 0.5,
    brokerCpuSecondsPer1000: 0.1,
    loadGeneratorCpuSecondsPer1000: 0.1,
    machineBusy: 0.9,
    databaseCpuSecondsPer1000: 0.4,
    peakRssMb: 120,
    s4ReadMeanMs: 1,
    handlingMeanMs: 5,
    commitsPerEvent: 2.3,
    complete: true,
    outcomes: {},
    deadLetters: 0,
    ...extra,
  };
}

// The ceilings' machine CPU is small here unless a test sets it: their cores allow 100,000 events/s, and the
// ceilings' own rates bound the scenarios.
function ceiling(prefetch: number, databasePerSecond: number, duplicatesPerSecond = 10_000): CeilingResult {
  const database = {
    events: 1000,
    p50Ms: 1,
    p99Ms: 2,
    databaseCpuSecondsPer1000: 0.003,
    machineCpuSecondsPer1000: 0.01,
  };
  return {
    prefetch,
    cores: 2,
    broker: { messagesPerSecond: 30_000, messages: 1000, machineCpuSecondsPer1000: 0.01 },
    database: { ...database, eventsPerSecond: databasePerSecond },
    databaseDuplicates: { ...database, eventsPerSecond: duplicatesPerSecond },
  };
}

function scenario(s4LatencyMs: number, newPerSecond: number, duplicates = phase(5000)): ScenarioResult {
  const name = scenarioName(s4LatencyMs, 100);
  return {
    name,
    s4LatencyMs,
    prefetch: 100,
    uniqueShare: 1,
    duplicateShare: 1,
    unique: phase(newPerSecond, { s4CallsPerEvent: 0.5 }),
    duplicates,
    mailsQueued: 10,
    ordersInPortal: 10,
  };
}

function run(index: number, newPerSecond: number, databasePerSecond: number): RunResult {
  return {
    run: index,
    loadAverageAtStart: 1,
    ceilings: [ceiling(100, databasePerSecond)],
    scenarios: [scenario(0, newPerSecond), scenario(50, newPerSecond / 2)],
  };
}

describe('benchmark summary', () => {
  it('gives a ratio to the ceiling as the median of the per-run ratios, not the ratio of the medians', () => {
    // Ratios 0.1, 0.8, 0.5: median 0.5; the ratio of the medians would be 200 / 600 = 0.33.
    const runs = [run(1, 100, 1000), run(2, 200, 250), run(3, 300, 600)];
    const [fast] = summarize(runs).scenarios;
    expect(fast?.figures.newShareOfDatabase).toEqual({
      median: 0.5,
      min: 0.1,
      max: 0.8,
      runs: [0.1, 0.8, 0.5],
    });
    expect(fast?.figures.newPerSecond).toMatchObject({ median: 200, min: 100, max: 300 });
  });

  it('judges ratio targets on the median over the runs and must-hold targets on the worst run', () => {
    const runs = [run(1, 700, 1000), run(2, 500, 1000), run(3, 650, 1000)];
    const second = runs[1] as RunResult;
    second.scenarios[0] = scenario(0, 500, phase(5000, { s4CallsPerEvent: 0.001 }));
    const targets = evaluateTargets({ runs, steady: undefined });
    const byName = (start: string) => targets.find((t) => t.name.startsWith(start));
    expect(byName('new events/s ÷ bound')).toMatchObject({
      value: 0.65,
      min: 0.5,
      max: 0.7,
      met: true,
    });
    // 50 ms at half the 0 ms rate (350, 250, 325/s), against the lower of prefetch ÷ latency (2,000/s) and the
    // database ceiling (1,000/s).
    expect(byName('new events/s at S/4HANA 50 ms')).toMatchObject({ value: 0.325, met: false });
    expect(byName('S/4HANA calls for duplicates')).toMatchObject({ value: 1, met: false });
  });

  it('judges against the cores for both ceilings when their CPU added allows less than either alone', () => {
    // Broker 30,000/s at 0.066 ms of machine CPU a message, database duplicates 31,000/s at 0.064 ms: two cores
    // allow 2 ÷ 0.13 ms = 15,385 duplicates/s, which 9,200/s is 0.6 of (0.3 of the database's alone).
    const one = run(1, 700, 1000);
    const c = one.ceilings[0] as CeilingResult;
    c.broker.machineCpuSecondsPer1000 = 0.066;
    c.databaseDuplicates = {
      ...c.database,
      eventsPerSecond: 31_000,
      machineCpuSecondsPer1000: 0.064,
    };
    // New events: the database's 1,000/s at 1 ms each; with the broker's 0.066 ms, two cores allow 1,876/s, so
    // the database ceiling itself stays the bound.
    c.database = { ...c.database, machineCpuSecondsPer1000: 1 };
    one.scenarios[0] = scenario(0, 700, phase(9200));
    const targets = evaluateTargets({ runs: [one], steady: undefined });
    const byName = (start: string) => targets.find((t) => t.name.startsWith(start));
    expect(byName('duplicates/s ÷ bound')?.value).toBeCloseTo(9200 / (2 / 0.000_13), 6);
    expect(byName('new events/s ÷ bound')?.value).toBeCloseTo(0.7, 6);
    const [summary] = summarize([one]).scenarios;
    expect(summary?.figures.duplicatesShareOfDatabase?.median).toBeCloseTo(9200 / 31_000, 6);
  });

  it('judges the 200 ms rate against prefetch ÷ latency, whatever the 0 ms rate', () => {
    // 100 in flight at 200 ms: at most 500/s. The 0 ms rate (1,000/s, then 2,000/s) does not move the share.
    const runs = [run(1, 1000, 1500), run(2, 2000, 3000)].map((r) => ({
      ...r,
      scenarios: [...r.scenarios, scenario(200, 350)],
    }));
    const target = evaluateTargets({ runs, steady: undefined }).find((t) =>
      t.name.startsWith('new events/s at S/4HANA 200 ms'),
    );
    expect(target).toMatchObject({ value: 0.7, min: 0.7, max: 0.7, met: true });
  });

  it('leaves out a target whose scenario was not measured', () => {
    const targets = evaluateTargets({ runs: [run(1, 700, 1000)], steady: undefined });
    expect(targets.map((t) => t.name)).not.toContain(
      'new events/s at S/4HANA 200 ms ÷ prefetch ÷ latency, prefetch 100',
    );
    expect(targets.map((t) => t.name)).not.toContain(
      'p99 publish to commit at 200 events/s, S/4HANA 0 ms (ms)',
    );
  });

  it('reports no duplicate figures for a scenario without a duplicate phase, and judges the others', () => {
    const runs = [run(1, 700, 1000)];
    const slow = (runs[0] as RunResult).scenarios[1] as ScenarioResult;
    delete slow.duplicates;
    slow.unique = phase(350, { peakRssMb: 210 });
    const [, summary] = summarize(runs).scenarios;
    expect(summary?.figures.duplicatesPerSecond?.median).toBeNaN();
    expect(summary?.figures.s4CallsForDuplicates?.median).toBeNaN();
    expect(summary?.figures.peakRssMb?.median).toBe(210);
    const targets = evaluateTargets({ runs, steady: undefined });
    const byName = (start: string) => targets.find((t) => t.name.startsWith(start));
    expect(byName('duplicates/s ÷ bound')).toMatchObject({ value: 0.5, met: true });
    expect(byName('S/4HANA calls for duplicates')).toMatchObject({ value: 0, met: true });
    expect(byName('peak RSS of the service')).toMatchObject({ value: 210, met: false });
  });

  it('leaves the duplicate ceiling and its bound out at a prefetch whose scenarios took no duplicates', () => {
    const runs = [run(1, 700, 1000)];
    const only = runs[0] as RunResult;
    delete (only.ceilings[0] as CeilingResult).databaseDuplicates;
    only.scenarios = [only.scenarios[1] as ScenarioResult];
    delete (only.scenarios[0] as ScenarioResult).duplicates;
    const { scenarios, ceilings } = summarize(runs);
    expect(ceilings[0]?.figures.databaseDuplicatesPerSecond?.median).toBeNaN();
    expect(ceilings[0]?.figures.machineDuplicatesPerSecond?.median).toBeNaN();
    expect(ceilings[0]?.figures.databaseNewPerSecond?.median).toBe(1000);
    expect(scenarios[0]?.figures.duplicatesShareOfBound?.median).toBeNaN();
    expect(scenarios[0]?.figures.newPerSecond?.median).toBe(350);
  });

  it('shows a figure measured in no run as a dash, without a range', () => {
    const none = spread([Number.NaN, Number.NaN, Number.NaN]);
    expect(showSpread(none)).toBe('–');
    expect(showSpread(spread([3, 1, 2]))).toBe('2 (1–3)');
  });

  it('judges the tracing target on the pairs measured side by side, leaving it out where none was', () => {
    const pair = (cpuRatio: number) => ({
      cpuRatio,
      events: [4000, 4000] as [number, number],
      seconds: 6,
      peakRssMb: 150,
      complete: true,
    });
    const runs = [run(1, 700, 1000), run(2, 700, 1000), run(3, 700, 1000)].map((r, i) => ({
      ...r,
      pairs: { traced: pair(1.3), steady: pair([1.12, 1.04, 1.08][i] as number) },
    }));
    const tracing = (rs: RunResult[]) =>
      evaluateTargets({ runs: rs, steady: undefined }).find((t) => t.name.includes('every delivery traced'));
    expect(tracing(runs)).toMatchObject({ value: 1.08, min: 1.04, max: 1.12, met: true });
    expect(tracing([run(1, 700, 1000)])).toBeUndefined();
    // A traced service's memory counts against the ceiling like any phase's.
    const rss = evaluateTargets({ runs, steady: undefined }).find((t) => t.name.startsWith('peak RSS'));
    expect(rss?.value).toBe(150);
  });

  it('names every scenario by its latency, prefetch and variant, once', () => {
    const names = SCENARIOS.map((s) => s.name);
    expect(names).toEqual(SCENARIOS.map((s) => scenarioName(s.s4LatencyMs, s.prefetch, s.variant)));
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('sizing a run to the machine', () => {
  it('gives a machine at or above the reference rate every event, a slower one proportionally fewer, in hundreds', () => {
    expect(eventsFor(REFERENCE_RATE)).toBe(REFERENCE_EVENTS);
    expect(eventsFor(3 * REFERENCE_RATE)).toBe(REFERENCE_EVENTS);
    expect(eventsFor(REFERENCE_RATE / 2)).toBe(REFERENCE_EVENTS / 2);
    expect(eventsFor(1_000)).toBe(5_700);
  });

  it('gives a very slow machine at least 30 % of the events, so that its windows last seconds', () => {
    expect(eventsFor(200)).toBe(0.3 * REFERENCE_EVENTS);
  });

  it('says how the count was sized, and nothing more when --events fixed it', () => {
    const format = (n: number) => n.toLocaleString('en-US');
    expect(eventsSized({ events: 20_000 }, format)).toBe('20,000 events');
    expect(
      eventsSized(
        { events: 5_700, calibrationRate: 999.6, referenceRate: 2_800, referenceEvents: 16_000 },
        format,
      ),
    ).toBe(
      '5,700 events (sized to this machine: a probe of its database ceiling reached 1,000 new events/s; 16,000 from 2,800/s up)',
    );
    // Results from before the reference was kept with them were sized from 20,000 events at 2,000/s.
    expect(eventsSized({ events: 10_000, calibrationRate: 999.6 }, format)).toMatch(
      /20,000 from 2,000\/s up\)$/,
    );
  });
});

describe('comparing two bench runs', () => {
  it('gives each scenario ratio’s change from the first run to the second', () => {
    const results = (runs: RunResult[]) => ({ summary: summarize(runs) }) as BenchResults;
    const first = results([run(1, 500, 1000)]);
    const second = results([run(1, 450, 1000)]);
    const [change] = compareRuns(first, second, ['newShareOfDatabase']);
    expect(change).toMatchObject({ scenario: 's4-0ms-prefetch-100', first: 0.5, second: 0.45 });
    expect(change?.change).toBeCloseTo(0.1, 10);
  });

  it('leaves out a figure either run did not measure, as read back from its results file', () => {
    const results = (runs: RunResult[]) =>
      JSON.parse(JSON.stringify({ summary: summarize(runs) })) as BenchResults;
    const withoutDuplicates = run(1, 500, 1000);
    for (const s of withoutDuplicates.scenarios) delete s.duplicates;
    const changes = compareRuns(results([run(1, 500, 1000)]), results([withoutDuplicates]), [
      'newShareOfDatabase',
      'duplicatesShareOfDatabase',
    ]);
    expect(changes.map((d) => d.key)).toEqual(['newShareOfDatabase', 'newShareOfDatabase']);
  });

  it('judges each target again from both runs, as targets.ts defines it now, and gives its change', () => {
    // The verdicts stored with a run are those of the targets when it ran: one since renamed is not compared.
    const stored = evaluateTargets({ runs: [run(1, 100, 1000)], steady: undefined }).map((t) => ({
      ...t,
      name: `${t.name} (as named before)`,
    }));
    const results = (runs: RunResult[]) => ({ runs, steady: undefined, targets: stored }) as BenchResults;
    const changes = compareTargets(results([run(1, 500, 1000)]), results([run(1, 550, 1000)]));
    expect(changes.some((d) => d.scenario.endsWith('(as named before)'))).toBe(false);
    const share = changes.find((d) => d.scenario.startsWith('new events/s ÷ bound'));
    expect(share).toMatchObject({ key: '≥ 0.6', first: 0.5, second: 0.55 });
    expect(share?.change).toBeCloseTo(0.1, 10);
  });
});

describe('published benchmark figures', () => {
  const published = JSON.parse(readFileSync(PUBLISHED, 'utf8')) as BenchResults;

  it('docs/performance.md shows exactly the figures of the JSON its generated block names', () => {
    const { block, source } = generatedBlock(readFileSync(PERFORMANCE_DOC, 'utf8'));
    const named = JSON.parse(
      readFileSync(new URL(`../../${source}`, import.meta.url), 'utf8'),
    ) as BenchResults;
    // After changing what the block shows: npm run bench:docs -- <that JSON>
    expect(block, `docs/performance.md out of step: npm run bench:docs -- ${source}`).toBe(
      performanceSection(named, source),
    );
  });

  it('replaces only the generated block of a document, and refuses a document without one', () => {
    const doc = ['# Performance', 'method by hand', performanceSection(published), 'bounds by hand'].join(
      '\n',
    );
    const other = { ...published, startedAt: '2030-01-02T00:00:00.000Z' } as BenchResults;
    const replaced = withPerformanceSection(doc, other);
    expect(replaced.startsWith('# Performance\nmethod by hand\n')).toBe(true);
    expect(replaced.endsWith('\nbounds by hand')).toBe(true);
    expect(replaced).toContain('Run of 2030-01-02');
    expect(replaced).not.toContain(`Run of ${published.startedAt.slice(0, 10)}`);
    expect(() => withPerformanceSection('# Performance\nno block', other)).toThrow(/bench:begin/);
  });

  it('shows a judged figure just past its goal with the digit that shows it', () => {
    expect(showJudged(1.1046)).toBe('1.105');
    expect(showJudged(1.0946)).toBe('1.095');
    expect(showJudged(0.039)).toBe('0.039');
    expect(showJudged(44.71)).toBe('44.7');
    expect(showJudged(Number.NaN)).toBe('–');
  });

  it('draws the chart as SVG with a column for every scenario', async () => {
    const svg = await renderChart(published);
    expect(svg.startsWith('<svg')).toBe(true);
    for (const s of published.summary.scenarios) expect(svg).toContain(`${s.s4LatencyMs} ms · ${s.prefetch}`);
  });
});
