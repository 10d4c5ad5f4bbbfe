// The measured figures of docs/performance.md, written from one bench run's JSON so that they cannot drift from
// the measurement: `npm run bench:docs [-- bench/results/<run>.json]` (default: the latest run) copies the run to
// bench/results/published.json, draws bench/results/performance.svg from it and replaces the block between the
// two markers below. The begin marker names the JSON the block was made from; the text around it is by hand.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventsSized } from './calibration.js';
import { renderChart } from './chart.js';
import { CEILING_FIGURES, figureOf, measuredPairs } from './figures.js';
import type { BenchResults, Spread } from './results.js';
import { variantOf } from './scenarios.js';
import { round, showSpread } from './stats.js';
import { evaluateTargets, targetCells } from './targets.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the published run is kept, relative to the repository's root, as the begin marker names it. */
export const PUBLISHED_NAME = 'bench/results/published.json';
export const PUBLISHED = resolve(ROOT, PUBLISHED_NAME);
const CHART = resolve(ROOT, 'bench/results/performance.svg');
export const PERFORMANCE_DOC = resolve(ROOT, 'docs/performance.md');
export const END = '<!-- bench:end -->';
const BEGIN_PATTERN = /<!-- bench:begin \(written by npm run bench:docs from (\S+)\) -->/;

/** The begin marker, naming the JSON file (relative to the repository's root) the block is made from. */
export function beginMarker(source: string): string {
  return `<!-- bench:begin (written by npm run bench:docs from ${source}) -->`;
}

/** The generated block of `doc`, markers included, and the JSON file its begin marker names. */
export function generatedBlock(doc: string): { block: string; source: string } {
  const match = BEGIN_PATTERN.exec(doc);
  const end = doc.indexOf(END);
  if (match === null || end < match.index) throw new Error(`no "${beginMarker('…')}" … "${END}" block`);
  return { block: doc.slice(match.index, end + END.length), source: match[1] as string };
}

/** The scenario columns of the table, by figure key (figures.ts), with their heading. */
const COLUMNS: Array<{ key: string; heading: string }> = [
  { key: 'newPerSecond', heading: 'new events/s' },
  { key: 'newShareOfBound', heading: '× bound' },
  { key: 'duplicatesPerSecond', heading: 'duplicates/s' },
  { key: 'duplicatesShareOfBound', heading: '× bound' },
  { key: 's4RequestsPerNew', heading: 'S/4HANA requests per new event' },
  { key: 's4ReadsPerNew', heading: 'orders read per new event' },
  { key: 's4KeysPerRequest', heading: 'orders per S/4HANA request' },
  { key: 'serviceCpuMsPerNew', heading: 'service CPU ms per new event' },
  { key: 'peakRssMb', heading: 'peak RSS MB' },
  { key: 'newEvents', heading: 'new events measured' },
  { key: 'duplicateEvents', heading: 'duplicates measured' },
];

const CEILING_ROWS: Array<{ key: string; heading: string }> = [
  { key: 'brokerPerSecond', heading: 'broker (messages/s)' },
  { key: 'databaseNewPerSecond', heading: 'database, new events/s' },
  { key: 'databaseDuplicatesPerSecond', heading: 'database, duplicates/s' },
  { key: 'machineNewPerSecond', heading: 'cores for broker and database, new events/s' },
  { key: 'machineDuplicatesPerSecond', heading: 'cores for broker and database, duplicates/s' },
];

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

function show(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return number.format(round(value, Math.abs(value) < 0.1 ? 3 : 2));
}

function cell(spread: Spread): string {
  return showSpread(spread, show);
}

// Ratios judged against a goal keep a third decimal, so that a run just past the goal (1.1046 against ≤ 1.1)
// never reads as on it.
export function showJudged(value: number): string {
  if (!Number.isFinite(value)) return '–';
  const factor = Math.abs(value) < 10 ? 1000 : 10;
  return number.format(Math.round(value * factor) / factor);
}

/** A scenario's first column: its S/4HANA latency, and what sets a variant apart from the plain scenario. */
function scenarioLabel(name: string, s4LatencyMs: number): string {
  const variant = variantOf(name);
  return variant === undefined ? `${s4LatencyMs} ms` : `${s4LatencyMs} ms, ${variant}`;
}

function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(header),
    `|---|${header
      .slice(1)
      .map(() => '---:')
      .join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}

/** The largest (max − min) ÷ median of `key` over the scenarios, and the scenario it belongs to. */
function widestSpread(results: BenchResults, key: string): { share: number; scenario: string } {
  let widest = { share: 0, scenario: '' };
  for (const s of results.summary.scenarios) {
    const f = figureOf(s, key);
    const share = (f.max - f.min) / f.median;
    if (Number.isFinite(share) && share > widest.share) {
      widest = { share, scenario: `S/4HANA ${scenarioLabel(s.name, s.s4LatencyMs)}, prefetch ${s.prefetch}` };
    }
  }
  return widest;
}

function percent(share: number): string {
  return `${Math.round(share * 100)} %`;
}

/** The generated block of docs/performance.md, markers included; `source` is the JSON it is made from. */
export function performanceSection(results: BenchResults, source = PUBLISHED_NAME): string {
  const { machine, settings, summary } = results;
  const loads = results.runs.map((run) => show(run.loadAverageAtStart)).join(', ');
  const ratio = widestSpread(results, 'newShareOfBound');
  const duplicateRatio = widestSpread(results, 'duplicatesShareOfBound');
  const absolute = widestSpread(results, 'newPerSecond');
  const parts = [
    beginMarker(source),
    '',
    '![New events/s and duplicates/s per scenario beside the broker and database ceilings, and S/4HANA requests per new event](../bench/results/performance.svg)',
    '',
    `Run of ${results.startedAt.slice(0, 10)} on ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, ` +
      `Node ${machine.node.replace(/^v/, '')}, PostgreSQL ${machine.postgres.split(' ')[0]}, all on one machine; ` +
      `${settings.runs} runs of ${eventsSized(settings, number.format)}; load average ${loads} at the start of ` +
      'each run (a one-minute average, which from the second run on still counts the run before); ' +
      `default settings (pool ${settings.poolSize}, log level ${settings.logLevel}), ` +
      `${number.format(results.durationSeconds)} s in all. Each cell is the median over the runs with the ` +
      'range in parentheses; × bound is the ratio to what bounds the scenario in the same run, its median over ' +
      'the runs: the lowest of the broker ceiling, the database ceiling (for duplicates its duplicate ceiling), ' +
      'what the cores allow for the work of both, and prefetch ÷ S/4HANA latency.',
    '',
    markdownTable(
      ['S/4HANA', 'prefetch', ...COLUMNS.map((c) => c.heading)],
      summary.scenarios.map((s) => [
        scenarioLabel(s.name, s.s4LatencyMs),
        String(s.prefetch),
        ...COLUMNS.map((c) => cell(figureOf(s, c.key))),
      ]),
    ),
    '',
    markdownTable(
      ['ceiling', ...summary.ceilings.map((c) => `prefetch ${c.prefetch}`)],
      CEILING_ROWS.filter((row) => CEILING_FIGURES.some((f) => f.key === row.key)).map((row) => [
        row.heading,
        ...summary.ceilings.map((c) => cell(figureOf(c, row.key))),
      ]),
    ),
    '',
    `Spread: over the ${settings.runs} runs, a scenario's ratio to its bound moved by at most ` +
      `${percent(ratio.share)} of its median for new events (${ratio.scenario || '–'}) and ` +
      `${percent(duplicateRatio.share)} for duplicates (${duplicateRatio.scenario || '–'}); ` +
      `absolute rates moved by up to ${percent(absolute.share)} (${absolute.scenario || '–'}).`,
  ];
  const pairs = measuredPairs(results.runs);
  if (pairs.length > 0) {
    parts.push(
      '',
      'Tracing, a service with it and one without on the same load at the same time (S/4HANA 0 ms, prefetch 100, ' +
        '`bench/pairedPhase.ts`), service CPU per new event with ÷ without: ' +
        `${pairs.map(({ label, ratio }) => `${label} ${showSpread(ratio, showJudged)}`).join(', ')}.`,
    );
  }
  const s = results.steady;
  if (s !== undefined) {
    parts.push(
      '',
      `Steady ${s.perSecond} events/s for ${Math.round(s.events / s.perSecond)} s ` +
        `(${number.format(s.events)} events, S/4HANA ${s.s4LatencyMs} ms, prefetch ${s.prefetch}), publish to ` +
        `commit: p50 ${show(s.p50Ms)} ms, p99 **${show(s.p99Ms)} ms**, p99.9 ${show(s.p999Ms)} ms, ` +
        `max ${show(s.maxMs)} ms; longest event-loop delay in the service ${show(s.eventLoopMaxDelayMs)} ms.`,
    );
  }
  // Judged from the runs by the targets as they are now, not as they were when the run was made.
  const targets = evaluateTargets(results);
  if (targets.length > 0) {
    parts.push(
      '',
      markdownTable(
        ['target', 'goal', 'measured', 'runs', ''],
        targets.map((t) => targetCells(t, showJudged, ['met', '**missed**'])),
      ),
    );
  }
  parts.push('', END);
  return parts.join('\n');
}

/** `doc` with its generated block replaced by one made from `results`. */
export function withPerformanceSection(doc: string, results: BenchResults): string {
  const { block } = generatedBlock(doc);
  const begin = doc.indexOf(block);
  return doc.slice(0, begin) + performanceSection(results) + doc.slice(begin + block.length);
}

async function main(file: string): Promise<void> {
  const source = resolve(file);
  const results = JSON.parse(readFileSync(source, 'utf8')) as BenchResults;
  if (!Array.isArray(results.runs)) throw new Error(`${file} is not a bench run's results (no runs)`);
  if (source !== PUBLISHED) copyFileSync(source, PUBLISHED);
  writeFileSync(CHART, await renderChart(results));
  writeFileSync(PERFORMANCE_DOC, withPerformanceSection(readFileSync(PERFORMANCE_DOC, 'utf8'), results));
  console.log(
    `docs/performance.md and bench/results/performance.svg now show ${file}, kept as ${PUBLISHED_NAME}`,
  );
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(process.argv[2] ?? resolve(ROOT, 'bench/results/latest.json'));
}
