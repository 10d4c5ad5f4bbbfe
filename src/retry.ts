import { setTimeout as sleep } from 'node:timers/promises';
import { classify } from './errors.js';

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 100, maxDelayMs: 2000 };

/**
 * A write that books what already happened (an email sent, a push answered, a run ended): tried for a few
 * seconds, so that it outlasts a failover or a dropped connection, and well inside an outbox's lease.
 */
export const BOOKING_RETRY: RetryPolicy = { attempts: 6, baseDelayMs: 250, maxDelayMs: 4000 };

/**
 * Runs `work` again after transient failures, waiting an exponentially growing, fully jittered delay
 * (so instances that failed together do not retry together). Permanent failures and the last transient
 * one are thrown. Stops waiting as soon as `signal` aborts (shutdown), throwing the last failure.
 */
export async function retry<T>(
  work: () => Promise<T>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= policy.attempts || classify(err) === 'permanent' || signal?.aborted) throw err;
      const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      const aborted = await sleep(Math.random() * ceiling, false, { signal }).catch(() => true);
      if (aborted) throw err;
    }
  }
}
