import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { shutdownInOrder } from '../../src/service/shutdown.js';
import { createLogger } from '../../src/telemetry/logger.js';

// Silent on purpose: its lines name a step and its error, here only the test's own, and no service runs beside it
// for the log guard to read.
const logger = createLogger('silent');

describe('shutdownInOrder', () => {
  it('closes in the declared order, each step after the one before has finished', async () => {
    const done: string[] = [];
    const step = (name: string, ms: number) => ({
      name,
      share: 1,
      close: async () => {
        await sleep(ms);
        done.push(name);
      },
    });
    await shutdownInOrder([step('intake', 30), step('loops', 10), step('pool', 0)], 1000, logger)();
    expect(done).toEqual(['intake', 'loops', 'pool']);
  });

  it('gives each step its share of the budget left and moves on when a step overruns it', async () => {
    const boxes: number[] = [];
    const reached: string[] = [];
    await shutdownInOrder(
      [
        {
          name: 'hanging intake',
          share: 0.5,
          close: (ms) => {
            boxes.push(ms);
            return new Promise(() => {});
          },
        },
        {
          name: 'pool',
          share: 1,
          close: (ms) => {
            boxes.push(ms);
            reached.push('pool');
          },
        },
      ],
      1000,
      logger,
    )();
    expect(boxes[0]).toBe(500);
    expect(boxes[1]).toBeGreaterThanOrEqual(100); // the floor every step gets
    expect(boxes[1]).toBeLessThanOrEqual(500);
    expect(reached).toEqual(['pool']);
  });

  it('goes on after a step that fails', async () => {
    const reached: string[] = [];
    await shutdownInOrder(
      [
        { name: 'broken', share: 1, close: () => Promise.reject(new Error('already closed')) },
        {
          name: 'thrown',
          share: 1,
          close: () => {
            throw new Error('sync');
          },
        },
        { name: 'pool', share: 1, close: () => void reached.push('pool') },
      ],
      1000,
      logger,
    )();
    expect(reached).toEqual(['pool']);
  });

  it('runs once however often it is called', async () => {
    let runs = 0;
    const stop = shutdownInOrder([{ name: 'pool', share: 1, close: () => void runs++ }], 1000, logger);
    const [first, second] = [stop(), stop()];
    expect(first).toBe(second);
    await Promise.all([first, second, stop()]);
    expect(runs).toBe(1);
  });
});
