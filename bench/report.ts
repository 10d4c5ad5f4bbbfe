// The results as JSON-ready data, the targets they are held against, and the tables printed at the end.
import type { BrokerCeiling } from './brokerCeiling.js';
import type { DatabaseCeiling } from './databaseCeiling.js';
import type { LatencyResult, PhaseResult } from './phases.js';
import type { Scenario } from './scenarios.js';
import { round, table } from './stats.js';
import { pipelineBound, type Target } from './targets.js';

export interface CeilingResult {
  prefetch: number;
  broker: BrokerCeiling;
  database: DatabaseCeiling;
  databaseDuplicates: DatabaseCeiling;
}

export interface ScenarioResult extends Scenario {
  unique: PhaseResult;
  duplicates: PhaseResult;
  mailsQueued: number;
  ordersInPortal: number;
}

export interface BenchResults {
  startedAt: string;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGb: number;
    node: string;
    postgres: string;
    loadAverageAtStart: number;
    loadAverageAtEnd: number;
  };
  settings: {
    events: number;
    duplicateShare: number;
    eventsPerOrder: number;
    poolSize: number;
    logLevel: string;
    overrides: Record<string, string>;
  };
  ceilings: CeilingResult[];
  scenarios: ScenarioResult[];
  steady: (LatencyResult & { perSecond: number; prefetch: number; s4LatencyMs: number }) | undefined;
  targets?: Target[];
  durationSeconds: number;
}

export function printReport(results: BenchResults): string {
  const { machine, settings } = results;
  const ceiling = (prefetch: number) => results.ceilings.find((c) => c.prefetch === prefetch);
  const parts: string[] = [
    `\nMachine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, Node ${machine.node}, ` +
      `PostgreSQL ${machine.postgres}; load average ${round(machine.loadAverageAtStart)} at start, ` +
      `${round(machine.loadAverageAtEnd)} at end`,
    `Settings: ${settings.events} events (${settings.duplicateShare * 100} % duplicates), ` +
      `${settings.eventsPerOrder} events per order on average, pool ${settings.poolSize}, log level ${settings.logLevel}` +
      (Object.keys(settings.overrides).length > 0 ? `, overrides ${JSON.stringify(settings.overrides)}` : ''),
    '',
    'Service (rates between commit timestamps; ×ceiling = share of this machine’s ceiling at the same prefetch)',
    table(
      [
        'S/4 ms',
        'prefetch',
        'new ev/s',
        '×DB',
        '×bound',
        '×broker',
        'dup ev/s',
        '×DB dup',
        '×broker',
        'S/4 calls/new',
        'S/4 calls dup',
        'S/4 read ms',
        'handling ms',
        'RSS MB',
        'n new/dup',
      ],
      results.scenarios.map((s) => {
        const c = ceiling(s.prefetch);
        return [
          String(s.s4LatencyMs),
          s.prefetch,
          s.unique.eventsPerSecond,
          s.unique.eventsPerSecond / (c?.database.eventsPerSecond ?? Number.NaN),
          s.unique.eventsPerSecond / pipelineBound(s, c),
          s.unique.eventsPerSecond / (c?.broker.messagesPerSecond ?? Number.NaN),
          s.duplicates.eventsPerSecond,
          s.duplicates.eventsPerSecond / (c?.databaseDuplicates.eventsPerSecond ?? Number.NaN),
          s.duplicates.eventsPerSecond / (c?.broker.messagesPerSecond ?? Number.NaN),
          s.unique.s4CallsPerEvent,
          s.duplicates.s4CallsPerEvent * s.duplicates.events,
          s.unique.s4ReadMeanMs,
          s.unique.handlingMeanMs,
          Math.max(s.unique.peakRssMb, s.duplicates.peakRssMb),
          `${s.unique.events}/${s.duplicates.events}${s.unique.complete && s.duplicates.complete ? '' : ' (timed out)'}`,
        ];
      }),
    ),
    '',
    'CPU seconds per 1,000 events (new / duplicates) in the measured window; PostgreSQL over the whole run;',
    'RabbitMQ is the whole broker; machine = share of both cores busy, whoever used them',
    table(
      [
        'S/4 ms',
        'prefetch',
        'service new',
        'service dup',
        'PostgreSQL new',
        'RabbitMQ new',
        'RabbitMQ dup',
        'load gen new',
        'PG commits/new',
        'machine new',
        'machine dup',
      ],
      results.scenarios.map((s) => [
        String(s.s4LatencyMs),
        s.prefetch,
        s.unique.cpuSecondsPer1000,
        s.duplicates.cpuSecondsPer1000,
        s.unique.databaseCpuSecondsPer1000,
        s.unique.brokerCpuSecondsPer1000,
        s.duplicates.brokerCpuSecondsPer1000,
        s.unique.loadGeneratorCpuSecondsPer1000,
        s.unique.commitsPerEvent,
        `${Math.round(s.unique.machineBusy * 100)} %`,
        `${Math.round(s.duplicates.machineBusy * 100)} %`,
      ]),
    ),
    '',
    'Ceilings (same prefetch, same flow control, same pool size)',
    table(
      [
        'prefetch',
        'broker msg/s',
        'DB new ev/s',
        'DB p50 ms',
        'DB p99 ms',
        'PG CPU s/1k new',
        'DB dup ev/s',
        'PG CPU s/1k dup',
      ],
      results.ceilings.map((c) => [
        String(c.prefetch),
        c.broker.messagesPerSecond,
        c.database.eventsPerSecond,
        c.database.p50Ms,
        c.database.p99Ms,
        c.database.databaseCpuSecondsPer1000,
        c.databaseDuplicates.eventsPerSecond,
        c.databaseDuplicates.databaseCpuSecondsPer1000,
      ]),
    ),
  ];
  if (results.steady !== undefined) {
    const s = results.steady;
    parts.push(
      '',
      `Steady rate (S/4HANA ${s.s4LatencyMs} ms, prefetch ${s.prefetch}): latency from publish to commit`,
      table(
        [
          'target ev/s',
          'measured ev/s',
          'events',
          'p50 ms',
          'p99 ms',
          'max ms',
          'service CPU s/1k',
          'PG CPU s/1k',
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
            s.maxMs,
            s.cpuSecondsPer1000,
            s.databaseCpuSecondsPer1000,
            `${Math.round(s.machineBusy * 100)} %`,
            s.peakRssMb,
          ],
        ],
      ),
    );
  }
  const targets = results.targets ?? [];
  if (targets.length > 0) {
    parts.push(
      '',
      'Targets',
      table(
        ['target', 'goal', 'measured', 'met'],
        targets.map((t) => [t.name, t.goal, t.value, t.met ? 'yes' : 'NO']),
      ),
    );
  }
  const problems = results.scenarios.filter(
    (s) => s.unique.deadLetters + s.duplicates.deadLetters > 0 || s.mailsQueued !== s.ordersInPortal,
  );
  for (const s of problems) {
    parts.push(
      `WARNING ${s.name}: ${s.duplicates.deadLetters} dead letters, ${s.mailsQueued} mails for ${s.ordersInPortal} orders`,
    );
  }
  parts.push(`\nRun took ${results.durationSeconds} s.`);
  return parts.join('\n');
}
