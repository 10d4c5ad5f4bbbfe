// Whether the service itself was busy over the last stretch: its event loop running half the time or more (CPU),
// or callers queued for a database connection. The adaptive credit window asks this before it reads long holds
// as waiting.
import { performance } from 'node:perf_hooks';

/** A loop that runs half the time or more is busy: with more in flight, each event only waits longer for its turn. */
const BUSY_LOOP = 0.5;

/** A function that tells whether the service was busy since it was last called (or since it was made). */
export function busySince(databaseQueued: () => boolean): () => boolean {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization >= BUSY_LOOP || databaseQueued();
  };
}
