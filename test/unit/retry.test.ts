import { describe, expect, it } from 'vitest';
import { PermanentError, TransientError } from '../../src/errors.js';
import { retry } from '../../src/retry.js';

const fast = { attempts: 4, baseDelayMs: 1, maxDelayMs: 2 };

function failing(times: number, error: () => Error) {
  let calls = 0;
  const work = async () => {
    calls++;
    if (calls <= times) throw error();
    return 'done';
  };
  return { work, calls: () => calls };
}

describe('retry', () => {
  it('tries again after transient failures and returns the first success', async () => {
    const subject = failing(2, () => new TransientError('busy'));
    await expect(retry(subject.work, fast)).resolves.toBe('done');
    expect(subject.calls()).toBe(3);
  });

  it('gives up after the budget and throws the last failure', async () => {
    const subject = failing(10, () => new TransientError('busy'));
    await expect(retry(subject.work, fast)).rejects.toThrow('busy');
    expect(subject.calls()).toBe(4);
  });

  it('never retries a permanent failure', async () => {
    const subject = failing(10, () => new PermanentError('bad'));
    await expect(retry(subject.work, fast)).rejects.toThrow('bad');
    expect(subject.calls()).toBe(1);
  });

  it('stops waiting as soon as the signal aborts', async () => {
    const subject = failing(10, () => new TransientError('busy'));
    const controller = new AbortController();
    const slow = { attempts: 10, baseDelayMs: 60_000, maxDelayMs: 60_000 };
    const pending = retry(subject.work, slow, controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toThrow('busy');
    expect(subject.calls()).toBe(1);
  });
});
