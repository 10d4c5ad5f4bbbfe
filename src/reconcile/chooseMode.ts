// Which run a family needs: a baseline when it has no mark yet, a sweep once a day and whenever the mark is older
// than the broker's and S/4HANA's longest hold of an event (7 days: Event Mesh's time to live, EEE's Failed
// events), a delta otherwise.
import type { RunMode } from './runs.js';
import { type Stamp, stampMs } from './stamp.js';

export const SWEEP_EVERY_MS = 86_400_000;
export const STALE_MARK_MS = 8 * 86_400_000;

export function chooseMode(mark: Stamp | undefined, lastSweep: Date | undefined, now: number): RunMode {
  if (mark === undefined) return 'baseline';
  if (now - stampMs(mark) > STALE_MARK_MS) return 'sweep';
  if (lastSweep === undefined || now - lastSweep.getTime() >= SWEEP_EVERY_MS) return 'sweep';
  return 'delta';
}
