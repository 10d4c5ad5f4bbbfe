// Shutdown as data: the ordered list of what to close, each with its share of the time left. Cloud Foundry
// sends SIGKILL 10 s after SIGTERM, so the whole list fits in a budget that leaves the process room to exit.
import type { Logger } from 'pino';

export interface Closer {
  name: string;
  /** The share of the budget still left when this step begins that it may take. */
  share: number;
  /** Gets its time box in ms; a step that has not finished by then is left behind and the next one begins. */
  close(ms: number): Promise<unknown> | unknown;
}

// A step always gets a moment, however late: closing the pool after a slow intake must still be tried.
const MIN_STEP_MS = 100;

/**
 * Runs the closers one after the other, each time-boxed, none able to stop the rest by failing. Memoised: a
 * second call (a second signal, a test's cleanup after a failed start) gets the same promise.
 */
export function shutdownInOrder(closers: Closer[], budgetMs: number, logger: Logger): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      const deadline = Date.now() + budgetMs;
      for (const { name, share, close } of closers) {
        const ms = Math.max(MIN_STEP_MS, (deadline - Date.now()) * share);
        const timer = new Promise((resolve) => setTimeout(resolve, ms, 'timeout').unref());
        const closing = (async () => close(ms))().catch((err) =>
          logger.warn({ err }, `closing ${name} failed`),
        );
        if ((await Promise.race([closing, timer])) === 'timeout') {
          logger.warn({ ms }, `closing ${name} did not finish in time`);
        }
      }
    })();
    return stopping;
  };
}
