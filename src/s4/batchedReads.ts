// Reads of S/4HANA shared and batched per destination. Three rules, in order of importance:
// 1. An event is answered only by a read that started after it arrived: a caller that arrives while its order
//    is being read waits for the next read of that order, never the running one, which may predate the change
//    it announces. Reads of one order never overlap, so they are answered in the order they were sent.
// 2. No added waiting: a read goes out as soon as there is capacity (the same turn of the event loop).
// 3. While `maxConcurrent` requests are in flight, newly waiting orders gather and go out together in the next
//    free request, up to `batchSize` keys, as one collection read with a `$filter` (keyFilter.ts).
// A 429 or 503 with Retry-After pauses every read of the destination; a collection read refused with 400
// makes this destination read one order per request from then on.
import type { Logger } from 'pino';
import { activeContext, type Context, ROOT_CONTEXT, withContext } from '../tracing.js';
import { failureDetail, s4Failure } from './s4Failure.js';
import { type SalesOrder, UnexpectedResponseError } from './salesOrder.js';
import type { KeyResult, SalesOrderApi } from './salesOrderApi.js';

export interface OrderRead {
  order: SalesOrder | null;
  /** When the read was sent: a state read later is at least as new. */
  readAt: Date;
}

/** Reads an order; `signal` (shutdown) ends the wait at once. */
export type ReadOrder = (salesOrder: string, signal?: AbortSignal) => Promise<OrderRead>;

/** What one request to S/4HANA came to, for metrics. */
export type RequestResult = 'ok' | 'not_found' | 'throttled' | 'refused' | 'error';

export interface BatchedReadOptions {
  /** Requests in flight at once (S4_MAX_CONCURRENT_READS). */
  maxConcurrent: number;
  /** Most keys in one request (S4_READ_BATCH); 1 reads one order per request. */
  batchSize: number;
  /**
   * How long a caller waits out a pause before it fails (transient), so that the event is released as it would
   * be had it retried on its own: its retry budget.
   */
  maxWaitMs: number;
  logger: Pick<Logger, 'warn'>;
  /** Sees every request: its result, how many orders it read, how long it took. Must not throw. */
  observe?: (request: { result: RequestResult; keys: number; seconds: number }) => void;
  /** Sees each extension of a pause, in seconds. Must not throw. */
  onPause?: (seconds: number) => void;
  clock?: () => Date;
}

/** Retry-After beyond this is not believed: a minute is long enough to spare S/4HANA and short enough to notice. */
export const MAX_PAUSE_MS = 60_000;

interface Waiter {
  deadline: number;
  /** The caller's trace context: a request runs under its first waiter's span. */
  trace: Context;
  resolve(read: OrderRead): void;
  reject(err: unknown): void;
}

export function batchReads(api: SalesOrderApi, options: BatchedReadOptions): ReadOrder {
  const clock = options.clock ?? (() => new Date());
  // Orders waiting for a read, oldest first; an order being read may wait here for its next read.
  let waiting = new Map<string, Waiter[]>();
  const reading = new Set<string>();
  let active = 0;
  let pausedUntil = 0;
  let pauseTimer: NodeJS.Timeout | undefined;
  let collectionsRefused = false;
  let scheduled = false;

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    // Callers that arrive in the same turn share a request; nothing waits on a timer.
    queueMicrotask(dispatch);
  }

  function dispatch(): void {
    scheduled = false;
    const wait = pausedUntil - Date.now();
    if (wait > 0) {
      pauseTimer ??= setTimeout(() => {
        pauseTimer = undefined;
        schedule();
      }, wait);
      return;
    }
    const limit = collectionsRefused ? 1 : options.batchSize;
    while (active < options.maxConcurrent) {
      const keys: string[] = [];
      for (const key of waiting.keys()) {
        if (keys.length >= limit) break;
        if (!reading.has(key)) keys.push(key);
      }
      if (keys.length === 0) return;
      void send(keys);
    }
  }

  async function send(keys: string[]): Promise<void> {
    const batch = keys.map((key) => {
      const waiters = waiting.get(key) ?? [];
      waiting.delete(key);
      reading.add(key);
      return { key, waiters };
    });
    active += 1;
    const readAt = clock();
    const started = performance.now();
    const observe = (result: RequestResult) =>
      options.observe?.({ result, keys: keys.length, seconds: (performance.now() - started) / 1000 });
    const single = keys.length === 1;
    try {
      const results: Map<string, KeyResult> = await withContext(
        batch[0]?.waiters[0]?.trace ?? ROOT_CONTEXT,
        async () =>
          single
            ? new Map([[keys[0] as string, { order: await api.read(keys[0] as string) }]])
            : await api.readMany(keys),
      );
      // An answer that covers none of its orders would be asked again for ever.
      if (results.size === 0)
        throw new UnexpectedResponseError('S/4HANA answered none of the orders asked for');
      const first = results.get(keys[0] as string);
      observe(single && first !== undefined && 'order' in first && first.order === null ? 'not_found' : 'ok');
      const unanswered: typeof batch = [];
      for (const entry of batch) {
        const result = results.get(entry.key);
        if (result === undefined) unanswered.push(entry);
        else if ('error' in result) for (const waiter of entry.waiters) waiter.reject(result.error);
        else for (const waiter of entry.waiters) waiter.resolve({ order: result.order, readAt });
      }
      requeue(unanswered);
    } catch (err) {
      const { status, retryAfterMs } = failureDetail(err);
      if (!single && status === 400) {
        // Several collection reads may be refused before the first refusal is seen: all fall back, one warns.
        if (!collectionsRefused) {
          options.logger.warn(
            { err, api: api.version },
            'S/4HANA refused a collection read with $filter (HTTP 400): reading one order per request from now on',
          );
        }
        collectionsRefused = true;
        observe('refused');
        requeue(batch);
      } else if ((status === 429 || status === 503) && retryAfterMs !== undefined) {
        observe('throttled');
        requeue(batch);
        pause(retryAfterMs, status);
      } else {
        observe('error');
        for (const entry of batch) for (const waiter of entry.waiters) waiter.reject(err);
      }
    } finally {
      active -= 1;
      for (const key of keys) reading.delete(key);
      schedule();
    }
  }

  /** Puts orders back at the head of the line, before any caller that arrived since. */
  function requeue(entries: Array<{ key: string; waiters: Waiter[] }>): void {
    if (entries.length === 0) return;
    const front = new Map(
      entries.map(({ key, waiters }) => [key, [...waiters, ...(waiting.get(key) ?? [])]]),
    );
    for (const [key, waiters] of waiting) if (!front.has(key)) front.set(key, waiters);
    waiting = front;
  }

  function pause(retryAfterMs: number, status: number): void {
    const now = Date.now();
    const until = now + Math.min(retryAfterMs, MAX_PAUSE_MS);
    if (until <= pausedUntil) return;
    options.onPause?.((until - Math.max(pausedUntil, now)) / 1000);
    pausedUntil = until;
    if (pauseTimer !== undefined) clearTimeout(pauseTimer);
    pauseTimer = undefined;
    // Callers whose budget ends before the pause does fail now, as their own retries would have.
    for (const [key, waiters] of waiting) {
      const staying = waiters.filter((waiter) => {
        if (waiter.deadline >= until) return true;
        waiter.reject(throttled(status, until - now));
        return false;
      });
      if (staying.length === 0) waiting.delete(key);
      else waiting.set(key, staying);
    }
  }

  return (salesOrder, signal) =>
    new Promise<OrderRead>((resolve, reject) => {
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
      const waiter: Waiter = {
        deadline,
        trace: activeContext(),
        resolve: (read) => {
          done();
          resolve(read);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      };
      const queue = waiting.get(salesOrder);
      if (queue === undefined) waiting.set(salesOrder, [waiter]);
      else queue.push(waiter);
      schedule();
    });
}

function throttled(status: number | undefined, ms: number) {
  const by = status === undefined ? '' : ` (HTTP ${status} with Retry-After)`;
  return s4Failure(
    'transient',
    `S/4HANA asked to pause reads for ${Math.ceil(ms / 1000)} s${by}, longer than this event waits`,
    {
      status,
    },
  );
}
