// A released message comes back at once. While a dependency is down, releasing at once is a hot loop that
// spends the broker's redelivery budget (Event Mesh's max redelivery count, a quorum queue's delivery limit)
// in milliseconds and dead-letters events that were fine. So a release waits about as long as releases have
// been happening in a row (from RELEASE_PAUSE_MIN_MS up to RELEASE_PAUSE_MAX_MS), and any accepted or
// rejected message ends the streak. Held messages count against the session window, which pauses intake.
import { setTimeout as sleep } from 'node:timers/promises';

const RELEASE_PAUSE_MIN_MS = 250;
const RELEASE_PAUSE_MAX_MS = 30_000;

export interface ReleasePause {
  /** Waits before a release, with jitter, for about as long as the current run of releases; `signal` ends it. */
  wait(): Promise<void>;
  /** A message was accepted or rejected: the run of releases is over. */
  end(): void;
}

export function releasePause(signal: AbortSignal): ReleasePause {
  // When the current run of releases began; undefined once a message was accepted or rejected.
  let releasingSince: number | undefined;
  return {
    async wait() {
      releasingSince ??= Date.now();
      const ceiling = Math.min(
        RELEASE_PAUSE_MAX_MS,
        Math.max(RELEASE_PAUSE_MIN_MS, Date.now() - releasingSince),
      );
      // Shutdown ends the pause: the message goes back at once.
      await sleep(ceiling / 2 + Math.random() * (ceiling / 2), undefined, { signal }).catch(() => {});
    },
    end() {
      releasingSince = undefined;
    },
  };
}
