// How many unsettled messages the consumer lets the broker send: the credit window. Little's law says the events in
// flight equal the settle rate times the time each is held. What the work itself needs is the rate times the
// hold time without queueing in the service (the base hold: S/4HANA's answer, the batch, the commit); whatever is
// held beyond that only waits for a busy database or CPU. So, as TCP Vegas does with round trips, the controller
// compares the window with what the measured rate needs: while the window holds hardly more (it is the bound:
// more in flight would raise the rate), it grows; once a good part of it only waits (more in flight only
// lengthens holds), it shrinks. Between the two lies a dead band, and both measures are smoothed, so noise does
// not make it oscillate. It learns only while the window is full: with no backlog, the window bounds nothing.
//
// Measuring costs nothing per message: the mean hold time is the area under the count of held messages over a
// sample divided by the messages settled in it (Little's law again), so no message carries a timestamp. A sample
// is one turn of the window (as many settles as the window), or a second if that comes first.
//
// Memory: every unsettled message is held in memory. Whatever the rate asks for, the window stays below the bytes
// budget divided by the largest message of the last turn, and it never leaves [floor, ceiling].

/**
 * The adaptive window's bounds (docs/brokers.md, Credit window). The ceiling is well inside what every broker
 * accepts (Advanced Event Mesh stops at its queue's unacknowledged-per-flow limit, 10,000 by default) and what
 * Little's law asks for at S/4HANA's latencies: about 650 events/s held about 0.3 s each.
 */
export const WINDOW_CEILING = 200;
/** Low enough that a dependency's outage holds few messages; high enough that reads still come in batches. */
const WINDOW_FLOOR = 10;
/** Where the window starts: enough for batched reads, little held if a dependency is down from the start. */
const WINDOW_INITIAL = 50;
/** At the 1 MiB MAX_MESSAGE_BYTES this leaves the window at 50; S/4HANA's events (about 1 KB) never reach it. */
const HELD_BYTES_BUDGET = 50 * 1024 * 1024;

/** The window the consumer uses without AMQP_PREFETCH. */
export function adaptiveWindow(now: () => number): CreditWindow {
  return creditWindow({
    floor: WINDOW_FLOOR,
    ceiling: WINDOW_CEILING,
    initial: WINDOW_INITIAL,
    heldBytesBudget: HELD_BYTES_BUDGET,
    now,
  });
}

export interface CreditWindow {
  /** The window to grant now. */
  current(): number;
  /** Messages received and not yet settled on the current connection. */
  held(): number;
  /** A message of `bytes` arrived. */
  received(bytes: number): void;
  /** A message was settled. */
  settled(): void;
  /** The connection is gone, and its unsettled messages with it; what was learned stays. */
  reset(): void;
}

export interface CreditWindowOptions {
  floor: number;
  ceiling: number;
  initial: number;
  /** The bytes of unsettled messages the window should fit at most. */
  heldBytesBudget: number;
  /** Milliseconds, monotonic. */
  now: () => number;
}

/** The window may stay while the rate needs more than this share of it (less than a tenth only waits)... */
const GROW_ABOVE = 0.9;
/** ...and shrinks once the rate needs less than this share (more than 30 % only waits). */
const SHRINK_BELOW = 0.7;
/** Each change moves the window by an eighth: a few turns from the initial window to the ceiling. */
const STEP = 1 / 8;
/** Weight of the newest sample in the smoothed rate and hold time. */
const SMOOTHING = 0.25;
/** After this many samples of a full window, it is halved to measure the base hold again. */
const PROBE_EVERY = 30;
/** A sample also ends after this long, so that a trickle (a dependency down, every message paused) is measured. */
const SAMPLE_MAX_MS = 1000;

export function creditWindow(options: CreditWindowOptions): CreditWindow {
  const { floor, ceiling, now } = options;
  const clamp = (value: number) => Math.min(ceiling, Math.max(floor, Math.round(value)));
  let window = clamp(options.initial);
  let held = 0;
  // The smoothed settle rate (per ms) and hold time (ms), and the base hold; 0 before the first sample.
  let rate = 0;
  let hold = 0;
  let baseHold = 0;
  // The largest message of the last complete sample.
  let largestBefore = 0;
  // The current sample.
  let started = now();
  let heldAtStart = 0;
  let lastEvent = started;
  let heldArea = 0;
  let settles = 0;
  let full = false;
  let largest = 0;

  const newSample = (at: number) => {
    started = at;
    heldAtStart = held;
    lastEvent = at;
    heldArea = 0;
    settles = 0;
    full = held >= window;
    largestBefore = largest;
    largest = 0;
  };
  const advance = (at: number) => {
    heldArea += held * (at - lastEvent);
    lastEvent = at;
  };
  const bytesLimit = () => Math.floor(options.heldBytesBudget / Math.max(1, largestBefore, largest));

  // The first sample of a connection is not learned from.
  let warmingUp = true;
  // Samples of a full window since the last probe; samples of the probe under way, 0 for none; the window to
  // return to after it.
  let sinceProbe = 0;
  let probing = 0;
  let resumeAt = 0;

  function learn(at: number) {
    const elapsed = at - started;
    if (elapsed <= 0 || settles === 0 || heldArea <= 0) return;
    if (warmingUp) {
      // The first sample of a connection began with nothing held: its holds and rate say nothing yet.
      warmingUp = false;
      return;
    }
    const sampleRate = settles / elapsed;
    const sampleHold = heldArea / settles;
    if (probing > 0) {
      // Messages received before the probe (those the larger window held, and those the broker still sends on its
      // credit) settle first, and a sample counts their holds only from its start: settling in a burst, as batched
      // reads and commits settle them, they make a sample's hold a fraction of the real one, and a base hold taken
      // from it shrinks a window that bounds the rate to its floor. The base hold is measured in the first sample
      // that began with no more held than the smaller window, after the one the probe began with.
      if (probing++ === 1 || heldAtStart > window) return;
      probing = 0;
      baseHold = sampleHold;
      window = resumeAt;
      return;
    }
    if (hold === 0) {
      rate = sampleRate;
      hold = sampleHold;
      baseHold = sampleHold;
    } else {
      rate += SMOOTHING * (sampleRate - rate);
      hold += SMOOTHING * (sampleHold - hold);
    }
    if (!full) return;
    // The base hold is measured at half the window, now and then, as TCP BBR measures its round trip: a full
    // window never shows a hold without queueing, and S/4HANA may have become slower for good. The lowest hold
    // seen would do on a quiet machine, but a busy one's noise makes it an outlier and shrinks the window.
    if (++sinceProbe >= PROBE_EVERY) {
      sinceProbe = 0;
      probing = 1;
      resumeAt = window;
      window = Math.max(floor, Math.ceil(window / 2));
      return;
    }
    const needed = rate * baseHold;
    if (needed > GROW_ABOVE * window) window += Math.ceil(window * STEP);
    else if (needed < SHRINK_BELOW * window) window -= Math.ceil(window * STEP);
  }

  return {
    current: () => Math.min(window, clamp(bytesLimit())),
    held: () => held,
    received(bytes) {
      advance(now());
      held += 1;
      if (held >= window) full = true;
      if (bytes > largest) largest = bytes;
    },
    settled() {
      if (held === 0) return;
      const at = now();
      advance(at);
      held -= 1;
      settles += 1;
      if (settles < window && at - started < SAMPLE_MAX_MS) return;
      learn(at);
      window = clamp(Math.min(window, bytesLimit()));
      newSample(at);
    },
    reset() {
      held = 0;
      warmingUp = true;
      newSample(now());
    },
  };
}

/** AMQP_PREFETCH: a window that never changes. */
export function fixedWindow(size: number): CreditWindow {
  let held = 0;
  return {
    current: () => size,
    held: () => held,
    received() {
      held += 1;
    },
    settled() {
      if (held > 0) held -= 1;
    },
    reset() {
      held = 0;
    },
  };
}
