// A caller's wait for a read of S/4HANA: it fails at once when a pause outlasts its budget, and at shutdown.
import type { Context } from '../telemetry/tracing.js';
import type { DocumentRead, ReadQueue, Waiter } from './readQueue.js';
import { s4Failure } from './s4Failure.js';

export interface WaitOptions {
  signal: AbortSignal | undefined;
  trace: Context;
  /** How long the caller may wait out a pause: its retry budget. */
  maxWaitMs: number;
  /** Date.now() until which reads of the destination are paused. */
  pausedUntil: number;
}

export function waitForRead<T>(
  queue: ReadQueue<T>,
  key: string,
  options: WaitOptions,
): Promise<DocumentRead<T>> {
  const { signal, trace, pausedUntil } = options;
  return new Promise<DocumentRead<T>>((resolve, reject) => {
    const now = Date.now();
    const deadline = now + options.maxWaitMs;
    if (pausedUntil > deadline) {
      reject(throttled(undefined, pausedUntil - now));
      return;
    }
    const onAbort = () => reject(s4Failure('transient', 'stopped waiting for S/4HANA: shutting down'));
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => signal?.removeEventListener('abort', onAbort);
    const waiter: Waiter<T> = {
      since: performance.now(),
      deadline,
      trace,
      resolve: (read) => {
        done();
        resolve(read);
      },
      reject: (err) => {
        done();
        reject(err);
      },
    };
    queue.add(key, waiter);
  });
}

export function throttled(status: number | undefined, ms: number) {
  const by = status === undefined ? '' : ` (HTTP ${status} with Retry-After)`;
  const message = `S/4HANA asked to pause reads for ${Math.ceil(ms / 1000)} s${by}, longer than this event waits`;
  return s4Failure('transient', message, { status });
}
