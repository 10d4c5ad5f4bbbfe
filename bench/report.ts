// The side-by-side tables, the same in the terminal and in docs/performance.md: per scenario the service and the
// plain consumer, median over the runs with the range, then every target with its computed verdict.
import type {
  BenchResults,
  DrainFigures,
  FullWindowRun,
  RunResult,
  ScenarioRun,
  SteadyRun,
  TracingRun,
} from './results.js';
import { HEADLINE, SCENARIOS } from './scenarios.js';
import {
  cpuShare,
  judge,
  postgresLabel,
  ratio,
  ratioCeiling,
  type Spread,
  samplingCost,
  scenarioFigure,
  scenarioIn,
  spread,
} from './targets.js';

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
      'service CPU ÷ plain',
      'relay held ms per chunk, service / plain',
      'PostgreSQL writes per event, service / plain',
      'service peak RSS MB',
      'plain peak RSS MB',
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
        figure(cpuShare),
        pgDelayMs === 0
          ? '–'
          : `${figure((s) => s.service.pgHeldMs ?? Number.NaN)} / ${figure((s) => s.plain.pgHeldMs ?? Number.NaN)}`,
        pgDelayMs === 0
          ? '–'
          : `${figure((s) => s.service.pgWritesPerEvent ?? Number.NaN)} / ${figure((s) => s.plain.pgWritesPerEvent ?? Number.NaN)}`,
        figure((s) => s.service.peakRssMb),
        figure((s) => s.plain.peakRssMb),
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
  const figure = steadyFigure(steady);
  const held = spread(steady.map((s) => s.pgHeldMs ?? Number.NaN));
  const relay = Number.isNaN(held.median) ? '' : ` (the relay held ${showSpread(held)} ms per chunk)`;
  return (
    `Steady ${first.perSecond} events/s for ${results.settings.steadySeconds} s, S/4HANA ${first.s4LatencyMs} ms, ` +
    `PostgreSQL +${first.pgDelayMs} ms${relay}, publish to commit: p50 ${figure((s) => s.p50Ms)} ms, ` +
    `p99 ${figure((s) => s.p99Ms)} ms, max ${figure((s) => s.maxMs)} ms.${splitText(steady)}`
  );
}

/** Prints a figure of the steady windows as median and range; a window that did not measure it is left out. */
function steadyFigure(steady: SteadyRun[]) {
  return (value: (s: SteadyRun) => number | undefined) =>
    showSpread(spread(steady.map((s) => value(s) ?? Number.NaN)));
}

/** Where the time went, as LatencySplit measures it. */
function splitText(steady: SteadyRun[]): string {
  if (steady.every((s) => s.split === undefined)) return '';
  const figure = steadyFigure(steady);
  return (
    ` Until the service took the event, then to its commit: ${figure((s) => s.split?.all.waitMs)} + ` +
    `${figure((s) => s.split?.all.toCommitMs)} ms for the median event, ${figure((s) => s.split?.slowest.waitMs)} + ` +
    `${figure((s) => s.split?.slowest.toCommitMs)} ms for the slowest 1 %.` +
    spanText(steady)
  );
}

/** A traced steady window's parts (SpanSplit), for the median event and the slowest 1 %. */
function spanText(steady: SteadyRun[]): string {
  if (steady.every((s) => s.spans === undefined)) return '';
  const figure = steadyFigure(steady);
  const parts = (of: 'all' | 'slowest') =>
    `${figure((s) => s.spans?.[of].toCheckMs)} to the identity check, ${figure((s) => s.spans?.[of].checkMs)} in ` +
    `it, ${figure((s) => s.spans?.[of].toTransactionMs)} to the transaction (the read, the turn), ` +
    `${figure((s) => s.spans?.[of].transactionMs)} in it`;
  return ` Every delivery traced: ${parts('all')} ms for the median event; ${parts('slowest')} ms for the slowest 1 %.`;
}

/**
 * The scenarios whose service drains measured `figure` in some run, each with a function that prints a scenario
 * figure as median and range.
 */
function scenariosWith(runs: RunResult[], figure: (d: DrainFigures) => number | undefined) {
  return SCENARIOS.filter(({ s4LatencyMs, pgDelayMs }) =>
    runs.some((run) => {
      const drain = scenarioIn(run, s4LatencyMs, pgDelayMs)?.service;
      return drain !== undefined && figure(drain) !== undefined;
    }),
  ).map(({ s4LatencyMs, pgDelayMs }) => ({
    name: `at S/4HANA ${s4LatencyMs} ms, PostgreSQL ${postgresLabel(pgDelayMs)}`,
    show: (value: (s: ScenarioRun) => number | undefined) =>
      showSpread(scenarioFigure(runs, s4LatencyMs, pgDelayMs, (s) => value(s) ?? Number.NaN)),
  }));
}

/**
 * The rates to the last commit, emails left out, per scenario: where the service's is well above its window's
 * rate, its emails, not its events, end the window.
 */
export function committedLine(results: BenchResults): string | undefined {
  const scenarios = scenariosWith(results.runs, (d) => d.committedPerSecond);
  if (scenarios.length === 0) return undefined;
  const committed = (d: DrainFigures) => d.committedPerSecond ?? Number.NaN;
  const parts = scenarios.map(
    ({ name, show }) =>
      `${name}, the service ${show((s) => committed(s.service))} against ${show((s) => committed(s.plain))} ` +
      `(service ÷ plain ${show((s) => committed(s.service) / committed(s.plain))})`,
  );
  return `New events per second to the last commit, the emails after it left out: ${parts.join('; ')}.`;
}

/**
 * Where the machine's CPU went, per scenario: the consumer's own and the rest (PostgreSQL, RabbitMQ, the bench's
 * stand-ins), and what service ÷ plain would be at most with the service's own CPU at zero.
 */
export function machineLine(results: BenchResults): string | undefined {
  const scenarios = scenariosWith(results.runs, (d) => d.machineCpuMsPerNew);
  if (scenarios.length === 0) return undefined;
  const rest = (d: DrainFigures) => (d.machineCpuMsPerNew ?? Number.NaN) - d.cpuMsPerNew;
  const parts = scenarios.map(
    ({ name, show }) =>
      `${name}, ${show((s) => s.service.machineCpuMsPerNew)} ms in the service’s drain (the rest ` +
      `${show((s) => rest(s.service))}, ${show((s) => s.service.machineBusyCores)} cores busy) against ` +
      `${show((s) => s.plain.machineCpuMsPerNew)} in the plain consumer’s (the rest ${show((s) => rest(s.plain))}, ` +
      `${show((s) => s.plain.machineBusyCores)} cores busy), so service ÷ plain would be at most ` +
      `${show(ratioCeiling)} with the service’s own CPU at zero`,
  );
  return (
    'The machine’s CPU per new event, every process on it (the consumer, PostgreSQL, RabbitMQ, the bench’s ' +
    `publisher, stand-ins and relay): ${parts.join('; ')}.`
  );
}

export function tracingLine(results: BenchResults): string | undefined {
  const tracing = results.runs.flatMap((run) => (run.tracing ? [run.tracing] : []));
  const first = tracing[0];
  if (first === undefined) return undefined;
  const figure = (value: (t: TracingRun) => number) => showSpread(spread(tracing.map(value)));
  const pairs = first.pairs?.length ?? 0;
  const paired =
    pairs === 0
      ? ''
      : ` Untraced and sampled were drained in ${pairs} pairs a run, one right after the other; the sampled ` +
        `drain cost ${showSpread(spread(results.runs.map(samplingCost)))} µs more per event (each run's median ` +
        `difference).`;
  return (
    `Service CPU per event draining ${number.format(first.events)} new events (S/4HANA ${first.s4LatencyMs} ms, ` +
    `PostgreSQL ${postgresLabel(first.pgDelayMs)}): ${figure((t) => t.cpuMicrosPerEvent)} µs untraced, ` +
    `${figure((t) => t.sampledCpuMicrosPerEvent ?? Number.NaN)} µs at the default sampling (parent-based, 0.1), ` +
    `${figure((t) => t.tracedCpuMicrosPerEvent)} µs with every delivery traced (no target).${paired}` +
    (first.spansPerEvent === undefined
      ? ''
      : ` The trace sink received ${figure((t) => t.spansPerEvent?.sampled ?? Number.NaN)} spans per event at the ` +
        `default sampling and ${figure((t) => t.spansPerEvent?.every ?? Number.NaN)} with every delivery traced.`)
  );
}

export function fullWindowLine(results: BenchResults): string | undefined {
  const pairs = results.runs.flatMap((run) => {
    const full = run.fullWindow;
    const empty = run.scenarios.find(
      (s) => full && s.s4LatencyMs === full.s4LatencyMs && s.pgDelayMs === full.pgDelayMs,
    )?.service;
    return full ? [{ full, empty }] : [];
  });
  const first = pairs[0]?.full;
  if (first === undefined) return undefined;
  const figure = (value: (full: FullWindowRun, empty: DrainFigures | undefined) => number | undefined) =>
    showSpread(spread(pairs.map(({ full, empty }) => value(full, empty) ?? Number.NaN)));
  const { processedEvents, sentMails, orders } = first.seeded;
  return (
    `Full retention window (${number.format(processedEvents)} processed events with their attempts, ` +
    `${number.format(sentMails)} sent emails, ${number.format(orders)} orders' portal rows already in the tables), ` +
    `S/4HANA ${first.s4LatencyMs} ms, PostgreSQL ${postgresLabel(first.pgDelayMs)}: the service drains ` +
    `${figure((full) => full.service.newPerSecond)} new events/s against ${figure((_, e) => e?.newPerSecond)} on ` +
    `empty tables; mean statement time, full against empty: identity check ` +
    `${figure((full) => full.service.statementMs?.identityCheck)} against ` +
    `${figure((_, e) => e?.statementMs?.identityCheck)} ms, effect ` +
    `${figure((full) => full.service.statementMs?.effect)} against ${figure((_, e) => e?.statementMs?.effect)} ms.`
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
  const extra = [
    committedLine(results),
    machineLine(results),
    steadyLine(results),
    tracingLine(results),
    fullWindowLine(results),
    crashTable(results),
  ].flatMap((part) => (part === undefined ? [] : ['', part]));
  return [
    `Run of ${results.startedAt.slice(0, 10)} on ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, ` +
      `Node ${machine.node.replace(/^v/, '')}, PostgreSQL ${machine.postgres.split(' ')[0]}, all on one machine; ` +
      `${settings.runs} ${settings.runs === 1 ? 'run' : 'runs'} of ${number.format(settings.newEvents)} new events over ` +
      `${number.format(settings.orders)} orders and ${number.format(settings.duplicates)} duplicates; the service ` +
      `${serviceSetting(settings.serviceOverrides)}, the plain consumer at prefetch ${settings.plainPrefetch}; ` +
      `${number.format(results.durationSeconds)} s in all. Each cell is the median over the runs with the range in ` +
      'parentheses; service ÷ plain is the median of the per-run ratios.',
    '',
    sideBySideTable(results),
    ...extra,
    '',
    targetTable(results),
  ].join('\n');
}

/**
 * The README's headline, from the same runs as the tables: the rates and CPU of the headline scenario, and the
 * ratios as the targets judge them (the median of the per-run ratios), with the ratio of the median rates beside.
 */
export function headline(results: BenchResults): string {
  const { runs, settings } = results;
  const { s4LatencyMs, pgDelayMs } = HEADLINE;
  const figure = (value: Parameters<typeof scenarioFigure>[3]) =>
    scenarioFigure(runs, s4LatencyMs, pgDelayMs, value);
  const service = figure((s) => s.service.newPerSecond);
  const plain = figure((s) => s.plain.newPerSecond);
  const held = figure((s) => s.service.pgHeldMs ?? Number.NaN);
  const relay = Number.isNaN(held.median) ? '' : ` (the relay held ${show(held.median)} ms per chunk)`;
  const header =
    `S/4HANA ${s4LatencyMs} ms, PostgreSQL +${pgDelayMs} ms${relay}; ${number.format(settings.newEvents)} new events ` +
    `over ${number.format(settings.orders)} orders, ${number.format(settings.duplicates)} duplicates; ` +
    `median of ${settings.runs} runs (range)`;
  const table = markdownTable(
    [header, 'new events/s', 'own CPU ms per new event'],
    [
      ['the service at its defaults', showSpread(service), showSpread(figure((s) => s.service.cpuMsPerNew))],
      [
        `a plain consumer, one GET and one transaction per event, prefetch ${settings.plainPrefetch}`,
        showSpread(plain),
        showSpread(figure((s) => s.plain.cpuMsPerNew)),
      ],
    ],
  );
  return [
    table,
    '',
    `Service ÷ plain consumer, the median of the per-run ratios: ${showSpread(figure(ratio))} in rate (the ratio ` +
      `of the median rates above is ${show(service.median / plain.median)}), ${showSpread(figure(cpuShare))} in ` +
      `own CPU per new event; ${show(figure((s) => s.service.s4RequestsPerNew).median)} S/4HANA requests per new ` +
      'event. Targets: ≥ 2.0 in rate, ≤ 0.5 in CPU.',
  ].join('\n');
}

/** How the service ran: at its defaults, or with what a lever measured alone set beside them. */
function serviceSetting(overrides: BenchResults['settings']['serviceOverrides']): string {
  if (overrides === undefined) return 'at its defaults';
  const set = [
    ...overrides.nodeArgs,
    ...Object.entries(overrides.env).map(([key, value]) => `${key}=${value}`),
    ...(overrides.cpus === undefined ? [] : [`on cores ${overrides.cpus} alone`]),
  ];
  return `with ${set.join(' ')} beside its defaults`;
}
