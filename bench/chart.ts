// The results as one SVG picture (Vega-Lite, rendered headless by Vega): per scenario the service's median
// rate with its range, beside the broker and database ceilings of the same prefetch, for new events and for
// duplicates, and the S/4HANA requests per new event. Rates span two orders of magnitude (18 to 40,000/s), so
// their axes are logarithmic.
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { figureOf } from './figures.js';
import type { BenchResults, CeilingSummary, ScenarioSummary } from './results.js';
import { variantOf } from './scenarios.js';

interface Row {
  scenario: string;
  series: string;
  median: number;
  min: number;
  max: number;
}

const SERVICE = 'service (median, min–max)';
const WIDTH = 560;

/** A scenario's column: latency and prefetch, and a variant's name, so that variants do not share a column. */
function label(s: ScenarioSummary): string {
  const variant = variantOf(s.name);
  return `${s.s4LatencyMs} ms · ${s.prefetch}${variant === undefined ? '' : ` ${variant}`}`;
}

function row(scenario: string, series: string, spread: ReturnType<typeof figureOf>): Row[] {
  if (!Number.isFinite(spread.median)) return [];
  return [{ scenario, series, median: spread.median, min: spread.min, max: spread.max }];
}

/** Rows of one rate panel: the service's figure and each ceiling's, per scenario. */
function rateRows(
  scenarios: ScenarioSummary[],
  ceilings: CeilingSummary[],
  serviceKey: string,
  ceilingKeys: Record<string, string>,
): Row[] {
  return scenarios.flatMap((s) => {
    const ceiling = ceilings.find((c) => c.prefetch === s.prefetch);
    const service = row(label(s), SERVICE, figureOf(s, serviceKey));
    // A scenario that did not measure this rate (no duplicate phase) has no column in its panel.
    if (service.length === 0) return [];
    return [
      ...service,
      ...Object.entries(ceilingKeys).flatMap(([series, key]) =>
        row(label(s), series, figureOf(ceiling, key)),
      ),
    ];
  });
}

const X = {
  field: 'scenario',
  type: 'nominal',
  title: 'S/4HANA latency · prefetch',
  axis: { labelAngle: 0 },
} as const;

function ratePanel(title: string, rows: Row[], order: string[]) {
  const x = { ...X, sort: order };
  // Bars on a log scale need a base other than zero: 1 event/s is below every rate measured.
  const log = { type: 'log', domainMin: 1, nice: true } as const;
  return {
    title,
    width: WIDTH,
    height: 220,
    data: { values: rows },
    encoding: {
      x,
      y: {
        field: 'median',
        type: 'quantitative',
        scale: log,
        title: 'per second (log scale)',
        axis: { values: [1, 10, 100, 1000, 10_000, 100_000], format: ',' },
      },
      color: {
        field: 'series',
        type: 'nominal',
        title: null,
        sort: [SERVICE],
        scale: { range: ['#4c78a8', '#e45756', '#54a24b'] },
        legend: { orient: 'top', labelLimit: 240 },
      },
    },
    layer: [
      {
        transform: [{ filter: `datum.series === '${SERVICE}'` }],
        mark: { type: 'bar', width: { band: 0.5 } },
        encoding: { y2: { datum: 1 } },
      },
      {
        transform: [{ filter: `datum.series === '${SERVICE}'` }],
        mark: { type: 'rule', color: 'black', strokeWidth: 2 },
        encoding: { y: { field: 'min', type: 'quantitative', scale: log }, y2: { field: 'max' } },
      },
      {
        transform: [{ filter: `datum.series !== '${SERVICE}'` }],
        mark: { type: 'tick', thickness: 3, size: 50 },
      },
    ],
  };
}

export function chartSpec(
  results: Pick<BenchResults, 'summary' | 'machine' | 'startedAt' | 'settings'>,
): TopLevelSpec {
  const { scenarios, ceilings } = results.summary;
  const order = scenarios.map(label);
  const reads = scenarios.flatMap((s) => row(label(s), SERVICE, figureOf(s, 's4RequestsPerNew')));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'Fleet order notifier: throughput beside this machine’s ceilings',
      subtitle:
        `${results.startedAt.slice(0, 10)}, ${results.machine.cpus} × ${results.machine.cpuModel}; ` +
        `bars: the service's median over ${results.settings.runs} runs, lines: min–max`,
    },
    config: { font: 'sans-serif' },
    vconcat: [
      ratePanel(
        'New events',
        rateRows(scenarios, ceilings, 'newPerSecond', {
          'database ceiling': 'databaseNewPerSecond',
          'broker ceiling': 'brokerPerSecond',
        }),
        order,
      ),
      ratePanel(
        'Duplicates',
        rateRows(scenarios, ceilings, 'duplicatesPerSecond', {
          'database ceiling': 'databaseDuplicatesPerSecond',
          'broker ceiling': 'brokerPerSecond',
        }),
        order,
      ),
      {
        title: 'S/4HANA requests per new event',
        width: WIDTH,
        height: 120,
        data: { values: reads },
        layer: [
          {
            mark: { type: 'bar', color: '#4c78a8', width: { band: 0.5 } },
            encoding: {
              x: { ...X, sort: order },
              y: {
                field: 'median',
                type: 'quantitative',
                title: 'requests per event',
                scale: { domain: [0, 1] },
              },
            },
          },
          {
            mark: { type: 'rule', color: 'black' },
            encoding: {
              x: { ...X, sort: order },
              y: { field: 'min', type: 'quantitative' },
              y2: { field: 'max' },
            },
          },
        ],
      },
    ],
  } as TopLevelSpec;
}

export async function renderChart(
  results: Pick<BenchResults, 'summary' | 'machine' | 'startedAt' | 'settings'>,
): Promise<string> {
  const view = new vega.View(vega.parse(compile(chartSpec(results)).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
