// The callers waiting for a read of S/4HANA, per key, and the keys being read: the bookkeeping of the rule that an
// event is answered only by a read that started after it arrived. Callers are bound to a read when it is taken,
// so whoever arrives later waits here for the next one, and a key being read is never offered to another
// request.

import type { Context } from '../telemetry/tracing.js';

/** A read of one document (a sales order, a customer return: the family's entity); null when S/4HANA has none. */
export interface DocumentRead<T> {
  document: T | null;
  /** When the read was sent: a state read later is at least as new. */
  readAt: Date;
}

export interface Waiter<T> {
  /** When the caller started waiting (performance.now()): how long a request has gathered. */
  since: number;
  /** Date.now() beyond which a pause fails the caller instead of holding it. */
  deadline: number;
  /** The caller's trace context: a request runs under its first waiter's span. */
  trace: Context;
  resolve(read: DocumentRead<T>): void;
  reject(err: unknown): void;
}

/** A key taken for a request, with the callers that request answers. */
export interface Taken<T> {
  key: string;
  waiters: Waiter<T>[];
}

export interface ReadQueue<T> {
  add(key: string, waiter: Waiter<T>): void;
  /** Up to `limit` keys that wait and are not being read, oldest first, and when the first of them began. */
  ready(limit: number): { keys: string[]; since: number };
  /** Binds the keys' callers to a request and marks the keys as being read. */
  take(keys: readonly string[]): Taken<T>[];
  /** The request for these keys has ended: they may be read again. */
  done(keys: readonly string[]): void;
  /** Puts keys back at the head of the line, before any caller that arrived since. */
  requeue(entries: readonly Taken<T>[]): void;
  /** Fails, with `failure()`, the callers that may not wait until `until` (Date.now() time). */
  expire(until: number, failure: () => unknown): void;
}

export function readQueue<T>(): ReadQueue<T> {
  // Insertion order is the line: the key whose first caller came first goes first.
  let waiting = new Map<string, Waiter<T>[]>();
  const reading = new Set<string>();
  return {
    add(key, waiter) {
      const queue = waiting.get(key);
      if (queue === undefined) waiting.set(key, [waiter]);
      else queue.push(waiter);
    },
    ready(limit) {
      const keys: string[] = [];
      let since = Number.POSITIVE_INFINITY;
      for (const [key, waiters] of waiting) {
        if (keys.length >= limit) break;
        if (reading.has(key)) continue;
        keys.push(key);
        since = Math.min(since, waiters[0]?.since ?? since);
      }
      return { keys, since };
    },
    take(keys) {
      return keys.map((key) => {
        const waiters = waiting.get(key) ?? [];
        waiting.delete(key);
        reading.add(key);
        return { key, waiters };
      });
    },
    done(keys) {
      for (const key of keys) reading.delete(key);
    },
    requeue(entries) {
      if (entries.length === 0) return;
      const front = new Map(
        entries.map(({ key, waiters }) => [key, [...waiters, ...(waiting.get(key) ?? [])]]),
      );
      for (const [key, waiters] of waiting) if (!front.has(key)) front.set(key, waiters);
      waiting = front;
    },
    expire(until, failure) {
      for (const [key, waiters] of waiting) {
        const staying = waiters.filter((waiter) => {
          if (waiter.deadline >= until) return true;
          waiter.reject(failure());
          return false;
        });
        if (staying.length === 0) waiting.delete(key);
        else waiting.set(key, staying);
      }
    },
  };
}
