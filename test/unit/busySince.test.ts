import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { busySince } from '../../src/messaging/busySince.js';

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the event loop runs and does nothing else
  }
}

describe('whether the service was busy', () => {
  it('says so after its event loop ran all the time, and not after it waited', async () => {
    const busy = busySince(() => false);
    spin(150);
    expect(busy()).toBe(true);
    await sleep(150);
    expect(busy()).toBe(false);
  });

  it('says so while callers queue for a database connection, however idle the loop', async () => {
    let queued = true;
    const busy = busySince(() => queued);
    await sleep(50);
    expect(busy()).toBe(true);
    queued = false;
    await sleep(50);
    expect(busy()).toBe(false);
  });
});
