// The portal push outbox's sender: claims due pushes, puts each state to the portal's API as its family writes
// it, then books the answer (pushed, conflict, retried later, or parked for an operator).
import { createLeasedLoop, type LeasedLoop, type LeasedSenderOptions } from '../leasedOutbox/leasedLoop.js';
import { BOOKING_RETRY, retry } from '../retry.js';
import type { PortalApi, PushAnswer } from './portalApi.js';
import { type PushKind, pushKindOf } from './pushKind.js';
import {
  type Booking,
  bookPush,
  type ClaimedPush,
  claimDuePushes,
  pushKeyOf,
  renewPushLeases,
} from './pushOutbox.js';

/** How one push's turn ended, as counted in fon_portal_push_total. */
export type PushResult = 'pushed' | 'conflict' | 'retry' | 'parked';

/** Pushes in flight at once are each of another resource (an order, a warranty case). */
export interface PortalSenderOptions extends LeasedSenderOptions<PushResult> {
  portal: PortalApi;
  /** The event families, for what log lines call a push's key. */
  families: readonly PushKind[];
}

/** wake(): called after a commit that queued a push. */
export type PortalSender = LeasedLoop;

const DEFAULT_CONCURRENCY = 8;
// The longest wait between two tries of one push: a portal down for hours is tried every five minutes.
const MAX_DELAY_SECONDS = 300;

/** Exponential backoff with jitter from one second, never sooner than the portal's Retry-After. */
export function retryDelaySeconds(attempts: number, retryAfterMs?: number): number {
  const backoff = Math.min(MAX_DELAY_SECONDS, 2 ** (attempts - 1)) * (0.5 + Math.random() / 2);
  return Math.max(backoff, (retryAfterMs ?? 0) / 1000);
}

function bookingOf(answer: PushAnswer, attempts: number): Booking {
  switch (answer.kind) {
    case 'pushed':
    case 'conflict':
      return { kind: 'done', result: answer.kind };
    case 'transient':
      return {
        kind: 'retry',
        delaySeconds: retryDelaySeconds(attempts, answer.retryAfterMs),
        error: answer.reason,
      };
    case 'parked':
      return { kind: 'parked', error: answer.reason };
  }
}

/**
 * Pushes each resource's state (an order's, a warranty case's) to the portal after commit. Safe with several
 * instances: rows are claimed with SKIP LOCKED under a short lease renewed while the portal answers, one claim
 * per resource at a time, so at most one push of a resource is in flight and its states reach the portal in the
 * order they were queued. No
 * transaction is open while the portal answers.
 */
export function createPortalSender(options: PortalSenderOptions): PortalSender {
  const { pool, portal, logger } = options;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const pollMs = options.pollMs ?? 1000;
  const leaseSeconds = options.leaseSeconds ?? 15;
  async function deliver(push: ClaimedPush): Promise<void> {
    const family = pushKindOf(options.families, push.family);
    const about = family === undefined ? {} : { [family.logKey]: push.key };
    const log = logger.child({ ...about, pushId: push.pushId, attempts: push.attempts });
    const answer = await portal.put(push);
    const booking = bookingOf(answer, push.attempts);
    // If the process dies right here, or the booking fails past its retries, the lease runs out and the same PUT
    // goes again, harmless with its Idempotency-Key.
    const held = await retry(() => bookPush(pool, push, booking), BOOKING_RETRY);
    if (!held) log.warn('push lease lost before its answer was booked; the state goes again');
    const result: PushResult = booking.kind === 'done' ? booking.result : booking.kind;
    if (answer.kind === 'pushed' || answer.kind === 'conflict')
      log.info({ status: answer.status }, `portal push ${result}`);
    else if (answer.kind === 'transient')
      log.warn(
        { reason: answer.reason, delaySeconds: booking.kind === 'retry' ? booking.delaySeconds : 0 },
        'portal push failed, will retry',
      );
    else log.error({ reason: answer.reason }, 'portal push parked');
    options.onResult?.(result);
  }

  return createLeasedLoop<ClaimedPush>({
    what: 'portal push',
    claim: (free) => claimDuePushes(pool, free, leaseSeconds, options.holder),
    key: pushKeyOf,
    deliver,
    renew: async (pushes) => renewPushLeases(pool, pushes, leaseSeconds),
    logger,
    concurrency,
    pollMs,
    leaseSeconds,
  });
}
