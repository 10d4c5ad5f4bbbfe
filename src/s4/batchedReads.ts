// Reads of S/4HANA shared and batched per family (its entity set). Three rules, in order of importance:
// 1. An event is answered only by a read that started after it arrived: a caller that arrives while its document
//    is being read waits for the next read of that document, never the running one, which may predate the change
//    it announces. Reads of one document never overlap, so they are answered in the order they were sent, and the
//    time a read was sent orders the states it returns (readQueue.ts keeps this).
// 2. No waiting at low load: while no request to the destination is in flight, a read goes out at once, in its
//    caller's microtasks.
// 3. Few requests when busy. While another request is in flight, a request waits until its first caller has
//    waited a fifth of the family's latest request's duration (GATHER_SHARE, at most MAX_GATHER_MS), and while
//    the destination's limit of requests is in flight, waiting keys wait for the next free one; either way
//    they go out together, up to `batchSize` keys, as one collection read with a `$filter` (keyFilter.ts). The
//    events of a burst reach the read over a few milliseconds, each after its identity check: sent as they came,
//    the first few would take every free request with a key each, and the rest of the burst, their own
//    documents' later events among them, would wait a whole read for a free one. A full request goes at once.
// The limit of requests in flight and the pause a 429 or 503 with Retry-After asks for belong to the destination,
// across families (destinationLimit.ts); a collection read refused with 400 makes this family read one key per
// request from then on.
import type { Logger } from 'pino';
import { type Context, ROOT_CONTEXT } from '../telemetry/tracing.js';
import type { DestinationLimit, DestinationReader } from './destinationLimit.js';
import { UnexpectedResponseError } from './odataEntity.js';
import type { KeyResult, ODataReader } from './odataReader.js';
import { type DocumentRead, readQueue, type Taken } from './readQueue.js';
import { waitForRead } from './readWait.js';
import { failureDetail } from './s4Failure.js';

/** Reads the document of `key`; `signal` (shutdown) ends the wait at once; `trace`: the span the request goes under. */
export type ReadDocument<T> = (
  key: string,
  signal?: AbortSignal,
  trace?: Context,
) => Promise<DocumentRead<T>>;

/** What one request to S/4HANA came to, for metrics. */
export type RequestResult = 'ok' | 'not_found' | 'throttled' | 'refused' | 'error';

export interface BatchedReadOptions {
  /** The destination's limit of requests in flight and its pause, shared with the other families' reads. */
  destination: DestinationLimit;
  /** Most keys in one request (S4_READ_BATCH); 1 reads one document per request. */
  batchSize: number;
  /**
   * How long a caller waits out a pause before it fails (transient), so that the event is released as it would
   * be had it retried on its own: its retry budget.
   */
  maxWaitMs: number;
  logger: Pick<Logger, 'warn'>;
  /** Sees every request: its result, how many keys it asked for, how long it took. Must not throw. */
  observe?: (request: { result: RequestResult; keys: number; seconds: number }) => void;
  clock?: () => Date;
}

/**
 * What a request waits for company, as a share of the latest request's duration: it costs a read at most a fifth
 * more, and a read so fast that the share is under a millisecond (a timer's grain) is never held back.
 */
export const GATHER_SHARE = 0.2;
/** The longest gather, however slow S/4HANA is: about the time the events of a burst take to arrive. */
export const MAX_GATHER_MS = 20;

export function batchReads<T>(api: ODataReader<T>, options: BatchedReadOptions): ReadDocument<T> {
  const { destination } = options;
  const clock = options.clock ?? (() => new Date());
  const queue = readQueue<T>();
  let collectionsRefused = false;
  let scheduled = false;
  // How long a request waits for company (rule 3), from the latest request that was answered.
  let gatherMs = 0;
  let timer: NodeJS.Timeout | undefined;

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    // Callers that arrive before the microtasks run out share a request. Not at the end of the turn
    // (perTurn.ts): a lone read would wait behind the rest of the turn's I/O for no company.
    queueMicrotask(dispatch);
  }

  function dispatch(): void {
    scheduled = false;
    const paused = destination.pausedUntil() - Date.now();
    if (paused > 0) {
      later(paused);
      return;
    }
    const limit = collectionsRefused ? 1 : options.batchSize;
    while (destination.hasRoom()) {
      const { keys, since } = queue.ready(limit);
      if (keys.length === 0) return;
      const gathering = since + gatherMs - performance.now();
      if (destination.inFlight() > 0 && keys.length < limit && gatherMs >= 1 && gathering > 0) {
        later(gathering);
        return;
      }
      void send(keys);
    }
  }

  /** Dispatches again in `ms`, instead of whatever was planned: each dispatch decides anew. */
  function later(ms: number): void {
    clearTimeout(timer);
    // Only the waiting callers need it, and they are held by their deliveries: it keeps no stopping process up.
    timer = setTimeout(schedule, ms).unref();
  }

  async function send(keys: string[]): Promise<void> {
    const batch = queue.take(keys);
    destination.started();
    const readAt = clock();
    const started = performance.now();
    const observe = (result: RequestResult) =>
      options.observe?.({ result, keys: keys.length, seconds: (performance.now() - started) / 1000 });
    const single = keys.length === 1;
    try {
      const trace = batch[0]?.waiters[0]?.trace ?? ROOT_CONTEXT;
      const results: Map<string, KeyResult<T>> = single
        ? new Map([[keys[0] as string, { document: await api.read(keys[0] as string, trace) }]])
        : await api.readMany(keys, trace);
      // An answer that covers none of its keys would be asked again for ever.
      if (results.size === 0)
        throw new UnexpectedResponseError('S/4HANA answered none of the documents asked for');
      gatherMs = Math.min(MAX_GATHER_MS, GATHER_SHARE * (performance.now() - started));
      const first = results.get(keys[0] as string);
      observe(
        single && first !== undefined && 'document' in first && first.document === null ? 'not_found' : 'ok',
      );
      const unanswered: Taken<T>[] = [];
      for (const entry of batch) {
        const result = results.get(entry.key);
        if (result === undefined) unanswered.push(entry);
        else if ('error' in result) for (const waiter of entry.waiters) waiter.reject(result.error);
        else for (const waiter of entry.waiters) waiter.resolve({ document: result.document, readAt });
      }
      queue.requeue(unanswered);
    } catch (err) {
      const { status, retryAfterMs } = failureDetail(err);
      if (!single && status === 400) {
        // Several collection reads may be refused before the first refusal is seen: all fall back, one warns.
        if (!collectionsRefused) {
          options.logger.warn(
            { err, api: api.version },
            'S/4HANA refused a collection read with $filter (HTTP 400): reading one document per request from now on',
          );
        }
        collectionsRefused = true;
        observe('refused');
        queue.requeue(batch);
      } else if ((status === 429 || status === 503) && retryAfterMs !== undefined) {
        observe('throttled');
        queue.requeue(batch);
        destination.pause(retryAfterMs, status);
      } else {
        observe('error');
        for (const entry of batch) for (const waiter of entry.waiters) waiter.reject(err);
      }
    } finally {
      queue.done(keys);
      // Wakes the other families first, then this one (schedule).
      destination.ended(reader);
    }
  }

  const reader: DestinationReader = { wake: schedule, expire: queue.expire };
  destination.join(reader);

  return (key, signal, trace = ROOT_CONTEXT) => {
    const read = waitForRead(queue, key, {
      signal,
      trace,
      maxWaitMs: options.maxWaitMs,
      pausedUntil: destination.pausedUntil(),
    });
    schedule();
    return read;
  };
}
