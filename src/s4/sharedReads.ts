import type { SalesOrder } from './salesOrder.js';
import type { SalesOrderApi } from './salesOrderApi.js';

export interface OrderRead {
  order: SalesOrder | null;
  /** When the read was sent: a state read later is at least as new. */
  readAt: Date;
}

export type ReadOrder = (salesOrder: string) => Promise<OrderRead>;

interface Waiter {
  resolve(read: OrderRead): void;
  reject(err: unknown): void;
}

/**
 * Lets events of the same order share one S/4HANA read, without ever answering an event with a state read
 * before the event arrived: callers that arrive while a read is in flight wait for the next read, which
 * starts when the current one ends and answers all of them. A burst of N events for one order costs at most
 * two reads instead of N, and reads of one order never overlap.
 */
export function shareReads(api: SalesOrderApi, clock: () => Date = () => new Date()): ReadOrder {
  const queues = new Map<string, Array<Waiter>>();

  async function run(salesOrder: string, waiting: Array<Waiter>): Promise<void> {
    const readAt = clock();
    try {
      const order = await api.read(salesOrder);
      for (const waiter of waiting) waiter.resolve({ order, readAt });
    } catch (err) {
      for (const waiter of waiting) waiter.reject(err);
    }
    const next = queues.get(salesOrder) ?? [];
    if (next.length === 0) {
      queues.delete(salesOrder);
    } else {
      queues.set(salesOrder, []);
      void run(salesOrder, next);
    }
  }

  return (salesOrder) => {
    return new Promise<OrderRead>((resolve, reject) => {
      const queue = queues.get(salesOrder);
      if (queue === undefined) {
        queues.set(salesOrder, []);
        void run(salesOrder, [{ resolve, reject }]);
      } else {
        queue.push({ resolve, reject });
      }
    });
  };
}
