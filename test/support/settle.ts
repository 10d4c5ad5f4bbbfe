import type { TestQueue } from './broker.js';
import { eventually } from './harness.js';
import type { Observer } from './observe.js';

/**
 * Waits until at least `events` events of `salesOrders` are processed, every queue holds nothing (ready or
 * delivered and unsettled: the service settles a delivery only once it is handled, so none is in flight), and
 * every mail queued for the orders is sent. Nothing that is read afterwards can still change.
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
}
