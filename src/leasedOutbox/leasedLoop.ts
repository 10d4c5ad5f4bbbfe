// The loop both outboxes share (mail, portal pushes): claim due rows under a lease while slots are free, deliver
// each without a transaction open, renew the leases of those in flight every third of the lease, and wake early
// when new work is committed or a slot frees. What a claim, a delivery and a renewal mean is the caller's.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { classify } from '../errors.js';

export interface LeasedLoopOptions<T> {
  /** Names the work in log lines: "mail", "portal push". */
  what: string;
  /** Claims up to `free` due rows, each leased for `leaseSeconds`. */
  claim(free: number): Promise<T[]>;
  /** The row's identity while it is in flight. */
  key(item: T): string;
  /**
   * Delivers one row and books the outcome; a failure to book is logged, never thrown further. It may call
   * `slotDone` once the delivery itself is over, so that its booking runs beside the next delivery (the lease
   * is renewed until it returns); otherwise the slot frees when it returns.
   */
  deliver(item: T, slotDone: () => void): Promise<void>;
  /**
   * Whether booking this row may make another due that no claim can take before (the next email of its order,
   * held back while this one is pending); the loop then claims once it is booked. Rows of this kind committed
   * while it was in flight are covered without it.
   */
  freesAnother?(item: T): boolean;
  /** Extends the leases of the rows in flight; returns the keys whose lease is still held. */
  renew(items: T[]): Promise<Set<string>>;
  logger: Logger;
  /** Rows in flight at once; a claim takes only what free slots deliver now, once half of them are free. */
  concurrency: number;
  pollMs: number;
  leaseSeconds: number;
}

/** What a sender built on this loop is given, beside its own work: its pool, logger, slots and lease. */
export interface LeasedSenderOptions<Result> {
  pool: Pool;
  logger: Logger;
  /** Called once per row with how its turn ended. */
  onResult?: (result: Result) => void;
  /** Rows in flight at once. */
  concurrency?: number;
  pollMs?: number;
  /** How long a claim holds a row; renewed every third of it while the delivery is in progress. */
  leaseSeconds?: number;
  /** This instance, written on each row it claims (`leased_by`). */
  holder?: string;
}

export interface LeasedLoop {
  start(): void;
  /** Looks for due rows now instead of at the next poll. */
  wake(): void;
  /** Lets the deliveries in flight finish, then stops. */
  stop(): Promise<void>;
}

export function createLeasedLoop<T>(options: LeasedLoopOptions<T>): LeasedLoop {
  const { what, logger, concurrency, pollMs, leaseSeconds } = options;
  const refillAt = Math.ceil(concurrency / 2);
  const inFlight = new Map<string, { item: T; done: Promise<void> }>();
  let running = false;
  let loop: Promise<void> | undefined;
  let renewal: NodeJS.Timeout | undefined;
  let renewing = false;
  // A wake that comes while the loop is claiming is kept for its next pause, which then ends at once. A plain
  // timer and flag: an AbortController per pause built two errors with their stack traces on every wake.
  let woken = false;
  let endPause: (() => void) | undefined;
  /** Rows whose delivery is under way: what the slots count (a row being booked is in flight, not busy). */
  let busy = 0;
  // A claim is worth its query only when there may be due rows it can take: a claim that came back short took
  // all of them, and a freed slot or a booked row then finds nothing new, unless work was committed (wake) since,
  // perhaps held back behind a row in flight, or the booked row held one back itself (freesAnother).
  let moreDue = true;
  /** Wakes from committed work so far: tells whether any came since a row was claimed. */
  let committed = 0;

  /** `committedAtClaim`: the wakes counted when its claim began; work committed during the claim may wait on it. */
  function track(item: T, committedAtClaim: number): void {
    const key = options.key(item);
    busy++;
    let slotFree = false;
    const slotDone = () => {
      if (slotFree) return;
      slotFree = true;
      busy--;
      if (moreDue) wakeIfRoom();
    };
    const done = options
      .deliver(item, slotDone)
      .catch((err) => {
        // A lost connection (a database failover) is routine: the lease brings the row back. Anything else is a bug.
        const level = classify(err) === 'transient' ? 'warn' : 'error';
        logger[level]({ err, key }, `${what} bookkeeping failed`);
      })
      .finally(() => {
        slotDone();
        inFlight.delete(key);
        // Booked: the next row of its order may be due now.
        if (committed !== committedAtClaim || options.freesAnother?.(item) === true) {
          moreDue = true;
          wakeIfRoom();
        }
      });
    inFlight.set(key, { item, done });
  }

  function wakeIfRoom(): void {
    if (concurrency - busy >= refillAt) wakeUp();
  }

  function wakeUp(): void {
    woken = true;
    endPause?.();
  }

  /** Until a wake (perhaps one that came before it) or `pollMs`, whichever is first. */
  function pause(): Promise<void> {
    if (woken) {
      woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        endPause = undefined;
        woken = false;
        resolve();
      };
      const timer = setTimeout(end, pollMs);
      endPause = end;
    });
  }

  async function renew(): Promise<void> {
    if (renewing || inFlight.size === 0) return;
    renewing = true;
    const items = [...inFlight.values()].map((flight) => flight.item);
    try {
      const held = await options.renew(items);
      for (const item of items) {
        const key = options.key(item);
        // Finished meanwhile (booked, parked, rescheduled) is fine; still in flight without a lease is not.
        if (!held.has(key) && inFlight.has(key))
          logger.warn({ key }, `${what} lease lost while in flight; another instance may deliver it too`);
      }
    } catch (err) {
      logger.warn({ err }, `${what} lease renewal failed`);
    } finally {
      renewing = false;
    }
  }

  async function run(): Promise<void> {
    while (running) {
      const free = concurrency - busy;
      if (free >= refillAt) {
        const committedBefore = committed;
        try {
          const claimed = await options.claim(free);
          moreDue = claimed.length === free || committed !== committedBefore;
          for (const item of claimed) track(item, committedBefore);
        } catch (err) {
          logger.warn({ err }, `${what} poll failed`);
        }
      }
      // Until new work is committed (wake), enough slots free up or a row is booked, or the poll.
      if (running) await pause();
    }
    await Promise.all([...inFlight.values()].map((flight) => flight.done));
  }

  return {
    start() {
      if (running) return;
      running = true;
      renewal = setInterval(() => void renew(), (leaseSeconds * 1000) / 3);
      renewal.unref();
      loop = run();
    },
    wake() {
      committed++;
      moreDue = true;
      wakeUp();
    },
    async stop() {
      running = false;
      wakeUp();
      await loop;
      clearInterval(renewal);
    },
  };
}
