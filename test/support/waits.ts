// Every wait of the shared kit. Each fails naming what it waited for; none asserts how fast anything is.
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestQueue } from './broker.js';
import type { Observer } from './observe.js';

/**
 * `work`, or a failure naming `what` if it has not settled within `ms`. For waits that would otherwise never end
 * (a hung socket, a missing timeout): the bound is far above any real duration, so it checks "does not hang",
 * never "is fast", and a busy machine cannot make it fail.
 */
export async function doesNotHang<T>(what: string, work: Promise<T>, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` until it returns a value other than undefined/false, or fails with `what` after the timeout. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    await sleep(50);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
  );
}

/**
 * Waits until at least `events` events of `salesOrders` are processed, every queue holds nothing (ready or
 * delivered and unsettled: the service settles a delivery only once it is handled, so none is in flight), every
 * mail queued for the orders is sent and none of their portal pushes is pending (due, waiting to retry or leased).
 * Nothing that is read afterwards can still change.
 */
export async function settled(
  view: Observer,
  queues: TestQueue[],
  salesOrders: string[],
  events: number,
  timeoutMs = 30_000,
): Promise<void> {
  await eventually(
    `${events} processed events of ${salesOrders.join(', ')}`,
    async () => (await view.processedOf(salesOrders)) >= events,
    timeoutMs,
  );
  await eventually(
    'every queue to hold nothing ready or in flight',
    async () => (await Promise.all(queues.map((queue) => queue.isIdle()))).every(Boolean),
    timeoutMs,
  );
  await eventually(
    `the mail of ${salesOrders.join(', ')} to be sent`,
    async () => (await view.unsentMail(salesOrders)) === 0,
    timeoutMs,
  );
  await eventually(
    `the portal pushes of ${salesOrders.join(', ')} to be answered`,
    async () => (await view.pendingPushes(salesOrders)) === 0,
    timeoutMs,
  );
}
