import { describe, expect, it, vi } from 'vitest';
import { PermanentError, TransientError } from '../../src/errors.js';
import { type RetryPolicy, retry } from '../../src/retry.js';

const fast = { attempts: 4, baseDelayMs: 1, maxDelayMs: 2 };

/**
 * Retries work that fails its first `times` calls with `Failure` ("failure 1", "failure 2", …) and then returns
 * 'done'; says what retry returned or threw, and how often it called the work.
 */
async function retried(
  times: number,
  Failure: typeof TransientError | typeof PermanentError,
  policy: RetryPolicy = fast,
  signal?: AbortSignal,
): Promise<{ returned?: string; thrown?: string; calls: number }> {
  let calls = 0;
  const work = async () => {
    calls++;
    if (calls <= times) throw new Failure(`failure ${calls}`);
    return 'done';
  };
  try {
    return { returned: await retry(work, policy, signal), calls };
  } catch (err) {
    return { thrown: (err as Error).message, calls };
  }
}

describe('retry', () => {
  it('tries again after transient failures and returns the first success', async () => {
    expect(await retried(2, TransientError)).toEqual({ returned: 'done', calls: 3 });
  });

  it('gives up after the budget and throws the last failure', async () => {
    expect(await retried(10, TransientError)).toEqual({ thrown: 'failure 4', calls: 4 });
  });

  it('never retries a permanent failure', async () => {
    expect(await retried(10, PermanentError)).toEqual({ thrown: 'failure 1', calls: 1 });
  });

  it('stops waiting as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const slow = { attempts: 10, baseDelayMs: 60_000, maxDelayMs: 60_000 };
    // The jitter fixed at half the ceiling: a wait of 30 s, which only the abort can end within the test's time
    // (a jitter drawn near zero would end it before the abort and try again).
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    try {
      setTimeout(() => controller.abort(), 20);
      expect(await retried(10, TransientError, slow, controller.signal)).toEqual({
        thrown: 'failure 1',
        calls: 1,
      });
    } finally {
      random.mockRestore();
    }
  });
});
