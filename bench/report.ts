// The tables printed at the end of a run: medians over the runs with their range, the ceilings, the steady
// rate, the targets, and the load each run started under.
import { eventsSized } from './calibration.js';
import { CEILING_FIGURES, figureOf as figure, measuredPairs, phasesOf, SCENARIO_FIGURES } from './figures.js';
import type { BenchResults } from './results.js';
import { round, show, showSpread, table } from './stats.js';
import { targetCells } from './targets.js';

export function printReport(results: BenchResults): string {
  const { machine, settings, summary } = results;
  const throughput = SCENARIO_FIGURES.filter((f) => f.table === 'throughput');
  const cost = SCENARIO_FIGURES.filter((f) => f.table === 'cost');
  const parts: string[] = [
    `\n${machineLine(results)}`,
    `Settings: ${settings.runs} runs of ${eventsSized(settings, String)}, ${settings.duplicateShare * 100} % duplicates, ` +
      `${settings.eventsPerOrder} events per order on average, pool ${settings.poolSize}, log level ${settings.logLevel}` +
      (Object.keys(settings.overrides).length > 0 ? `, overrides ${JSON.stringify(settings.overrides)}` : ''),
    `Load average at the start of each run: ${results.runs.map((r) => round(r.loadAverageAtStart)).join(', ')}; ` +
      `${round(machine.loadAverageAtEnd)} at the end`,
    '',
    'Service: median over the runs (min–max); rates between commit timestamps; × = ratio to the ceiling of the',
    'same run and prefetch (bound = the database, or prefetch ÷ S/4HANA latency), median of the per-run ratios',
    table(
      ['scenario', ...throughput.map((f) => f.label)],
      summary.scenarios.map((s) => [s.name, ...throughput.map((f) => showSpread(figure(s, f.key)))]),
    ),
    '',
    'Costs, medians: CPU ms per event in the measured window (PostgreSQL over the whole run, RabbitMQ the whole',
    'broker); machine busy = share of all cores busy, whoever used them',
    table(
      ['scenario', ...cost.map((f) => f.label)],
      summary.scenarios.map((s) => [s.name, ...cost.map((f) => figure(s, f.key).median)]),
    ),
    '',
    'Ceilings (same prefetch, same flow control, same pool size), median (min–max)',
    table(
      ['prefetch', ...CEILING_FIGURES.map((f) => f.label)],
      summary.ceilings.map((c) => [
        String(c.prefetch),
        ...CEILING_FIGURES.map((f) => showSpread(figure(c, f.key))),
      ]),
    ),
  ];
  const s = results.steady;
  if (s !== undefined) {
    parts.push(
      '',
      `Steady rate (S/4HANA ${s.s4LatencyMs} ms, prefetch ${s.prefetch}), one window: latency from publish to commit`,
      table(
        [
          'target ev/s',
          'measured ev/s',
          'events',
          'p50 ms',
          'p99 ms',
          'p99.9 ms',
          'max ms',
          'longest event-loop delay ms',
          'service CPU ms/event',
          'machine busy',
          'RSS MB',
        ],
        [
          [
            String(s.perSecond),
            s.eventsPerSecond,
            s.events,
            s.p50Ms,
            s.p99Ms,
            s.p999Ms,
            s.maxMs,
            s.eventLoopMaxDelayMs,
            s.cpuSecondsPer1000,
            `${Math.round(s.machineBusy * 100)} %`,
            s.peakRssMb,
          ],
        ],
      ),
    );
  }
  const pairs = measuredPairs(results.runs);
  if (pairs.length > 0) {
    parts.push(
      '',
      'Tracing, with ÷ without, two services on the same load at the same time: service CPU per new event, median (min–max)',
      table(
        ['pair', 'CPU ratio'],
        pairs.map(({ label, ratio }) => [label, showSpread(ratio, show)]),
      ),
    );
  }
  if (results.targets.length > 0) {
    parts.push(
      '',
      'Targets (ratios within a run; judged on the median over the runs, or on the worst run where every one counts)',
      table(
        ['target', 'goal', 'measured', 'runs min–max', 'met'],
        results.targets.map((t) => targetCells(t, show, ['yes', 'NO'])),
      ),
    );
  }
  for (const run of results.runs) {
    for (const sc of run.scenarios) {
      const phases = phasesOf(sc);
      const deadLetters = phases.reduce((sum, phase) => sum + phase.deadLetters, 0);
      if (deadLetters > 0 || sc.mailsQueued !== sc.ordersInPortal) {
        parts.push(
          `WARNING run ${run.run} ${sc.name}: ${deadLetters} dead letters, ` +
            `${sc.mailsQueued} mails for ${sc.ordersInPortal} orders`,
        );
      }
      if (phases.some((phase) => !phase.complete)) {
        parts.push(`WARNING run ${run.run} ${sc.name}: a phase ran into its time limit`);
      }
    }
  }
  for (const run of results.runs) {
    for (const [name, pair] of Object.entries(run.pairs ?? {})) {
      if (!pair.complete) parts.push(`WARNING run ${run.run} pair ${name}: a side ran into its time limit`);
    }
  }
  parts.push(`\nRun took ${results.durationSeconds} s.`);
  return parts.join('\n');
}

export function machineLine({ machine }: Pick<BenchResults, 'machine'>): string {
  return (
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, Node ${machine.node}, ` +
    `PostgreSQL ${machine.postgres}; load average ${round(machine.loadAverageAtStart)} at start`
  );
}
