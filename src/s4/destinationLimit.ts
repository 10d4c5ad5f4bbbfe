// What the S/4HANA destination allows, shared by every family's batched reads (batchedReads.ts): at most
// S4_MAX_CONCURRENT_READS requests in flight together, and one pause when it answers 429 or 503 with
// Retry-After. The limit and the pause are the destination's, not a family's: with a limit each, two busy
// families would put twice the limit on it, and a pause taken by one would not hold the other, which would go on
// asking a system that asked to be spared. Each family keeps its own line of callers and its own batching, since
// their entity sets differ. Built once by the composition root.
import { throttled } from './readWait.js';

/** Retry-After beyond this is not believed: a minute is long enough to spare S/4HANA and short enough to notice. */
export const MAX_PAUSE_MS = 60_000;

export interface DestinationLimitOptions {
  /** Requests in flight at once, across families (S4_MAX_CONCURRENT_READS). */
  maxConcurrent: number;
  /** Sees each extension of a pause, in seconds. Must not throw. */
  onPause?: (seconds: number) => void;
}

/** A family's batched reads, as the destination sees them. */
export interface DestinationReader {
  /** A request ended: send what waits, if the destination allows it now. */
  wake(): void;
  /** Fails, with `failure()`, the callers that may not wait until `until` (Date.now() time). */
  expire(until: number, failure: () => unknown): void;
}

export interface DestinationLimit {
  /** Adds a family's reads: woken when a request of any family ends, its callers held by every pause. */
  join(reader: DestinationReader): void;
  /** Requests in flight now, of every family. */
  inFlight(): number;
  /** Whether another request may go out now. */
  hasRoom(): boolean;
  /** Date.now() until which every read of the destination waits. */
  pausedUntil(): number;
  started(): void;
  /** A request of `reader` ended; the other families are offered its place first, so none starves another. */
  ended(reader: DestinationReader): void;
  /** S/4HANA answered `status` with Retry-After: every family's reads wait, up to MAX_PAUSE_MS. */
  pause(retryAfterMs: number, status: number): void;
}

export function createDestinationLimit(options: DestinationLimitOptions): DestinationLimit {
  const readers: DestinationReader[] = [];
  let active = 0;
  let pausedUntil = 0;
  return {
    join(reader) {
      readers.push(reader);
    },
    inFlight: () => active,
    hasRoom: () => active < options.maxConcurrent,
    pausedUntil: () => pausedUntil,
    started() {
      active += 1;
    },
    ended(reader) {
      active -= 1;
      const at = readers.indexOf(reader) + 1;
      for (const next of [...readers.slice(at), ...readers.slice(0, at)]) next.wake();
    },
    pause(retryAfterMs, status) {
      const now = Date.now();
      const until = now + Math.min(retryAfterMs, MAX_PAUSE_MS);
      if (until <= pausedUntil) return;
      options.onPause?.((until - Math.max(pausedUntil, now)) / 1000);
      pausedUntil = until;
      // Callers whose budget ends before the pause does fail now, as their own retries would have.
      for (const reader of readers) reader.expire(until, () => throttled(status, until - now));
    },
  };
}
