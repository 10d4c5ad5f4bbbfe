// Runs reconciliation on a timer: every RECONCILE_INTERVAL, each family in turn, in the mode its mark calls for
// (chooseMode.ts). A family busy on another instance is left to it; a failed run (logged where runs end) is
// followed by the next turn from the mark, so an interval missed while the service was down or S/4HANA failed is
// caught up, never skipped. The first turn comes one interval after start, so that starting instances do not all
// read at once.
import type { Logger } from 'pino';
import type { ReconcileFamily } from './collection.js';
import type { ReconcileRunner } from './runner.js';

export interface ReconcileSchedule {
  /** Stops the timer and waits for the turn in progress, whose run stops before its next page (the runner's signal). */
  stop(): Promise<void>;
}

export function scheduleReconcile(options: {
  runner: ReconcileRunner;
  families: readonly ReconcileFamily[];
  intervalMs: number;
  logger: Pick<Logger, 'warn'>;
}): ReconcileSchedule {
  const { runner, families, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let turn: Promise<void> = Promise.resolve();

  async function runAll(): Promise<void> {
    for (const family of families) {
      if (stopped) return;
      try {
        const started = await runner.start(family);
        if (started !== 'busy') await started.ended;
      } catch (err) {
        logger.warn({ err, family }, 'reconciliation run could not start');
      }
    }
  }

  function next(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      turn = runAll().finally(next);
    }, options.intervalMs);
  }

  next();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await turn;
    },
  };
}
