// Reconciliation as the composition root wires it (docs/reconciliation.md): with S4_SOURCE set, one collection
// reader on the destination's one limit, each family's collection (those that have one), the runner applying
// through the event path, its metrics, and the timer. Without S4_SOURCE, nothing: the service runs as it always did.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Config } from '../config/loadConfig.js';
import type { ApplyRead } from '../events/reconcileRead.js';
import type { FamilyModule } from '../families/index.js';
import type { ReconcileControl } from '../http/reconcileRoutes.js';
import type { ReconcileCollection } from '../reconcile/collection.js';
import { createCollectionReader } from '../reconcile/collectionReader.js';
import { createReconcileRequests } from '../reconcile/reconcileRequests.js';
import { createReconcileRunner, type ReconcileRunner } from '../reconcile/runner.js';
import { latestRuns, markLags, repairingRuns } from '../reconcile/runs.js';
import { type ReconcileSchedule, scheduleReconcile } from '../reconcile/schedule.js';
import type { DestinationLimit } from '../s4/destinationLimit.js';
import { scrapedGaugeByLabel } from '../telemetry/scrapedGauges.js';

export interface Reconciliation {
  runner: ReconcileRunner;
  /** The reconciled families' names, in the order given. */
  families: readonly string[];
  /** What the admin API starts and lists. */
  control: ReconcileControl;
  /** Starts the timer (none with RECONCILE_INTERVAL=off). */
  start(): void;
  /** Stops the timer; a run in progress stops before its next page. */
  stop(): Promise<void>;
}

export function createReconciliation(
  config: Readonly<Config>,
  deps: {
    families: readonly FamilyModule[];
    pool: Pool;
    s4Limit: DestinationLimit;
    applyRead: ApplyRead;
    registry: Registry;
    logger: Logger;
  },
): Reconciliation | undefined {
  const settings = config.reconcile;
  if (settings === undefined) return undefined;
  const { pool, logger } = deps;
  const reconciled = deps.families.flatMap((family) =>
    family.reconcile === undefined ? [] : [{ module: family, reconcile: family.reconcile }],
  );
  const collections: Record<string, ReconcileCollection<unknown>> = {};
  for (const { module, reconcile } of reconciled)
    collections[module.name] = { family: module.name, ...reconcile.collection(config) };
  const labelOf = new Map(deps.families.map((family) => [family.name, family.label]));
  const label = (family: string) => labelOf.get(family) ?? family;

  const metrics = reconcileMetrics(deps.registry, label, settings.source, pool);
  const requests = createReconcileRequests({
    destination: config.s4.destination,
    timeoutMs: config.s4.timeoutMs,
    limit: deps.s4Limit,
  });
  const stopping = new AbortController();
  const runs = createReconcileRunner({
    pool,
    reader: createCollectionReader(requests, settings.pageSize),
    collections,
    settings,
    port: {
      apply: (family, documents, run) => deps.applyRead(family, documents, run),
      openKeys: (family) =>
        reconciled.find(({ module }) => module.name === family)?.reconcile.openKeys(pool) ??
        Promise.resolve([]),
    },
    signal: stopping.signal,
    observe: (family, page) => {
      metrics.rows.inc({ family: label(family) }, page.rows);
      metrics.repairs.inc({ family: label(family) }, page.repairs);
      metrics.requests.inc({ family: label(family) }, page.requests);
    },
  });
  const log = logger.child({ component: 'reconcile' });
  // Every run, started by the timer or the API: counted and logged when it ends, and waited for at shutdown.
  const going = new Set<Promise<unknown>>();
  const runner: ReconcileRunner = {
    async start(family, mode) {
      const started = await runs.start(family, mode);
      if (started === 'busy') return started;
      const ended = started.ended.then((end) => {
        metrics.runs.inc({ family: label(family), status: end.status });
        if (end.status === 'failed')
          log.warn(
            { err: end.error, family, run: end.id },
            'reconciliation run failed; the next starts from its mark',
          );
        else {
          const { id, status: _status, ...totals } = end;
          log.info({ family, run: id, ...totals }, 'reconciliation run done');
        }
        return end;
      });
      going.add(ended);
      void ended.finally(() => going.delete(ended));
      return { id: started.id, ended };
    },
  };
  const families = reconciled.map(({ module }) => module.name);
  const control: ReconcileControl = {
    families,
    async start(family, mode) {
      const started = await runner.start(family, mode);
      return started === 'busy' ? 'busy' : { id: started.id };
    },
    async latest(limit) {
      return (await latestRuns(pool, limit)).map(({ source: _source, errorClass, errorText, ...run }) => ({
        ...run,
        ...(errorClass === null ? {} : { error: { class: errorClass, text: errorText ?? '' } }),
      }));
    },
  };
  let schedule: ReconcileSchedule | undefined;
  return {
    runner,
    families,
    control,
    start() {
      if (settings.intervalMs === undefined) return;
      schedule = scheduleReconcile({
        runner,
        families,
        intervalMs: settings.intervalMs,
        logger: log,
      });
    },
    async stop() {
      stopping.abort();
      await Promise.all([schedule?.stop(), ...going]);
    },
  };
}

function reconcileMetrics(registry: Registry, label: (family: string) => string, source: string, pool: Pool) {
  const counter = (name: string, help: string) =>
    new Counter({ name, help, labelNames: ['family'], registers: [registry] });
  const labelled = (read: () => Promise<Array<[string, number]>>) => async () =>
    (await read()).map(([family, value]) => [label(family), value] as const);
  scrapedGaugeByLabel(
    registry,
    'fon_reconcile_mark_lag_seconds',
    'Seconds since the newest point reconciliation vouches for: its mark, or the window end of its latest completed run when later',
    'family',
    labelled(() => markLags(pool, source)),
  );
  scrapedGaugeByLabel(
    registry,
    'fon_reconcile_repairing_runs',
    "How many of the family's latest completed reconciliation runs in a row had repairs",
    'family',
    labelled(() => repairingRuns(pool, source)),
  );
  return {
    runs: new Counter({
      name: 'fon_reconcile_runs_total',
      help: 'Reconciliation runs that ended, by status: done, failed',
      labelNames: ['family', 'status'],
      registers: [registry],
    }),
    rows: counter('fon_reconcile_rows_total', 'Documents reconciliation read and applied'),
    repairs: counter(
      'fon_reconcile_repairs_total',
      'Documents reconciliation found changed beyond what events told: an event missed or late',
    ),
    requests: counter('fon_reconcile_requests_total', 'HTTP requests reconciliation sent to S/4HANA'),
  };
}
