// The side-by-side tables, the same in the terminal and in docs/performance.md: per scenario the service and the
// plain consumer, median over the runs with the range, then every target with its computed verdict.
import type { BenchResults, SteadyRun, TracingRun } from './results.js';
import { SCENARIOS } from './scenarios.js';
import { judge, postgresLabel, ratio, type Spread, scenarioFigure, spread } from './targets.js';

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

/** Three significant digits at most, thousands grouped; a dash for a figure not measured. */
export function show(value: number): string {
  if (!Number.isFinite(value)) return '–';
  const magnitude = Math.floor(Math.log10(Math.abs(value) || 1));
  const factor = 10 ** Math.max(0, 2 - magnitude);
  return number.format(Math.round(value * factor) / factor);
}

/** `median (min–max)`, the median alone when the runs agree or there was one. */
export function showSpread(figure: Spread): string {
  if (figure.runs.length <= 1 || !(figure.min < figure.max)) return show(figure.median);
  return `${show(figure.median)} (${show(figure.min)}–${show(figure.max)})`;
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

export function sideBySideTable(results: Pick<BenchResults, 'runs'>): string {
  const { runs } = results;
  const measured = SCENARIOS.filter((s) => runs.some((run) => run.scenarios.some((r) => r.name === s.name)));
  return markdownTable(
    [
      'S/4HANA',
      'PostgreSQL',
      'service, new events/s',
      'plain consumer',
      'service ÷ plain',
      'S/4HANA requests per new event',
      'service CPU ms per new event',
      'plain CPU ms per new event',
      'service peak RSS MB',
    ],
    measured.map(({ s4LatencyMs, pgDelayMs }) => {
      const figure = (value: Parameters<typeof scenarioFigure>[3]) =>
        showSpread(scenarioFigure(runs, s4LatencyMs, pgDelayMs, value));
      return [
        `${s4LatencyMs} ms`,
        postgresLabel(pgDelayMs),
        figure((s) => s.service.newPerSecond),
        figure((s) => s.plain.newPerSecond),
        figure(ratio),
        figure((s) => s.service.s4RequestsPerNew),
        figure((s) => s.service.cpuMsPerNew),
        figure((s) => s.plain.cpuMsPerNew),
        figure((s) => s.service.peakRssMb),
      ];
    }),
  );
}

export function targetTable(results: Pick<BenchResults, 'runs'>): string {
  return markdownTable(
    ['target', 'goal', 'measured', 'runs', 'verdict'],
    judge(results).map((v) => [
      v.name,
      v.goal,
      show(v.value),
      v.spread.runs.length === 0 ? '–' : `${show(v.spread.min)}–${show(v.spread.max)}`,
      v.met === undefined ? 'not measured' : v.met ? 'met' : '**missed**',
    ]),
  );
}

export function steadyLine(results: BenchResults): string | undefined {
  const steady = results.runs.flatMap((run) => (run.steady ? [run.steady] : []));
  const first = steady[0];
  if (first === undefined) return undefined;
  const figure = (value: (s: SteadyRun) => number) => showSpread(spread(steady.map(value)));
  return (
    `Steady ${first.perSecond} events/s for ${results.settings.steadySeconds} s, S/4HANA ${first.s4LatencyMs} ms, ` +
    `PostgreSQL +${first.pgDelayMs} ms, publish to commit: p50 ${figure((s) => s.p50Ms)} ms, ` +
    `p99 ${figure((s) => s.p99Ms)} ms, max ${figure((s) => s.maxMs)} ms.`
  );
}

export function tracingLine(results: BenchResults): string | undefined {
  const tracing = results.runs.flatMap((run) => (run.tracing ? [run.tracing] : []));
  const first = tracing[0];
  if (first === undefined) return undefined;
  const figure = (value: (t: TracingRun) => number) => showSpread(spread(tracing.map(value)));
  return (
    `Service CPU per event draining ${number.format(first.events)} new events (S/4HANA ${first.s4LatencyMs} ms, ` +
    `PostgreSQL ${postgresLabel(first.pgDelayMs)}): ${figure((t) => t.cpuMicrosPerEvent)} µs untraced, ` +
    `${figure((t) => t.tracedCpuMicrosPerEvent)} µs with every delivery traced.`
  );
}

export function crashTable(results: BenchResults): string | undefined {
  if (results.crashes.length === 0) return undefined;
  const intro =
    'Killed (SIGKILL) half-way through a backlog at S/4HANA 50 ms, PostgreSQL +1 ms, and started again; ' +
    'what the broker delivered twice:';
  return `${intro}\n\n${markdownTable(
    [
      'credit window',
      'events',
      'recorded at the kill',
      'delivered again',
      'of which committed before the kill',
    ],
    results.crashes.map((c) => [
      c.window,
      show(c.events),
      show(c.recordedAtKill),
      show(c.redelivered),
      show(c.redeliveredAfterCommit),
    ]),
  )}`;
}

/** Everything a run shows: what was run, the side-by-side table, the steady window and the verdicts. */
export function report(results: BenchResults): string {
  const { machine, settings } = results;
  const extra = [steadyLine(results), tracingLine(results), crashTable(results)].flatMap((part) =>
    part === undefined ? [] : ['', part],
  );
  return [
    `Run of ${results.startedAt.slice(0, 10)} on ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, ` +
      `Node ${machine.node.replace(/^v/, '')}, PostgreSQL ${machine.postgres.split(' ')[0]}, all on one machine; ` +
      `${settings.runs} ${settings.runs === 1 ? 'run' : 'runs'} of ${number.format(settings.newEvents)} new events over ` +
      `${number.format(settings.orders)} orders and ${number.format(settings.duplicates)} duplicates; the service ` +
      `at its defaults, the plain consumer at prefetch ${settings.plainPrefetch}; ` +
      `${number.format(results.durationSeconds)} s in all. Each cell is the median over the runs with the range in ` +
      'parentheses; service ÷ plain is the median of the per-run ratios.',
    '',
    sideBySideTable(results),
    ...extra,
    '',
    targetTable(results),
  ].join('\n');
}
