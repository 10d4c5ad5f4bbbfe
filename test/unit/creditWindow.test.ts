import { describe, expect, it } from 'vitest';
import { type CreditWindow, creditWindow, fixedWindow } from '../../src/messaging/creditWindow.js';

/** A fake clock the test moves by hand. */
function fakeClock() {
  let ms = 0;
  return { now: () => ms, advance: (by: number) => (ms += by) };
}

const BOUNDS = { floor: 10, ceiling: 200, heldBytesBudget: 50 * 1024 * 1024 };

interface Service {
  /** Hold time of a message when nothing waits inside the service, ms. */
  baseHoldMs: number;
  /** Most messages the service settles per ms (its database or CPU): beyond, more in flight only waits. */
  capacityPerMs: number;
  /** Share by which each millisecond's settle rate wanders, deterministic. */
  noise?: number;
}

/**
 * Drives `window` for `ms` milliseconds against a service: a backlog keeps the window full, and messages settle
 * at the rate Little's law gives, the window over the hold time, up to the service's capacity. Returns the
 * window after each millisecond.
 */
function run(window: CreditWindow, clock: ReturnType<typeof fakeClock>, service: Service, ms: number) {
  const seen: number[] = [];
  let due = 0;
  for (let t = 0; t < ms; t += 1) {
    while (window.held() < window.current()) window.received(1000);
    clock.advance(1);
    const wander = service.noise === undefined ? 1 : 1 + service.noise * Math.sin(t * 12.9898);
    due += Math.min(window.held() / service.baseHoldMs, service.capacityPerMs) * wander;
    for (; due >= 1 && window.held() > 0; due -= 1) window.settled();
    seen.push(window.current());
  }
  return seen;
}

/** The value below which `share` of `values` lie. */
const percentile = (values: number[], share: number) =>
  [...values].sort((a, b) => a - b)[Math.floor(share * (values.length - 1))] ?? Number.NaN;

/** Without the probes' dips (the window halved now and then to measure the base hold again). */
const withoutProbes = (values: number[]) => {
  const median = percentile(values, 0.5);
  return values.filter((v) => v >= 0.75 * median);
};

const directionChanges = (values: number[]) => {
  let changes = 0;
  let last = 0;
  for (let i = 1; i < values.length; i += 1) {
    const step = Math.sign((values[i] ?? 0) - (values[i - 1] ?? 0));
    if (step !== 0 && last !== 0 && step !== last) changes += 1;
    if (step !== 0) last = step;
  }
  return changes;
};

describe('credit window', () => {
  it('grows to its ceiling while more in flight raises the rate', () => {
    const clock = fakeClock();
    const window = creditWindow({ ...BOUNDS, initial: 50, now: clock.now });
    // S/4HANA at 50 ms: a message is held 120 ms; the service could settle 2,000 a second.
    const seen = run(window, clock, { baseHoldMs: 120, capacityPerMs: 2 }, 20_000);
    expect(percentile(seen.slice(10_000), 0.1)).toBe(200);
    expect(Math.max(...seen)).toBe(200);
  });

  it('shrinks to about what the rate needs when more in flight only lengthens holds', () => {
    const clock = fakeClock();
    const window = creditWindow({ ...BOUNDS, initial: 50, now: clock.now });
    expect(percentile(run(window, clock, { baseHoldMs: 120, capacityPerMs: 2 }, 20_000), 0.9)).toBe(200);
    // The database slows down: 500 a second at most, so 60 in flight suffice, and the dead band keeps the window
    // within about 60/0.9 and 60/0.7 (less a step, for the probes' dips).
    const seen = run(window, clock, { baseHoldMs: 120, capacityPerMs: 0.5 }, 60_000).slice(30_000);
    expect(percentile(seen, 0.1)).toBeGreaterThanOrEqual(60);
    expect(Math.max(...seen)).toBeLessThanOrEqual(Math.ceil(60 / 0.7) + 12);
  });

  it('stays put on noisy measurements instead of oscillating', () => {
    const clock = fakeClock();
    const window = creditWindow({ ...BOUNDS, initial: 70, now: clock.now });
    const seen = run(window, clock, { baseHoldMs: 120, capacityPerMs: 0.5, noise: 0.15 }, 60_000);
    const settled = withoutProbes(seen.slice(10_000));
    expect(Math.max(...settled) - Math.min(...settled)).toBeLessThanOrEqual(30);
    expect(directionChanges(settled)).toBeLessThanOrEqual(6);
  });

  it('never grants more than its ceiling nor less than its floor', () => {
    const clock = fakeClock();
    const fast = creditWindow({ ...BOUNDS, initial: 500, now: clock.now });
    expect(fast.current()).toBe(200);
    expect(Math.max(...run(fast, clock, { baseHoldMs: 1000, capacityPerMs: 100 }, 30_000))).toBe(200);
    const slow = creditWindow({ ...BOUNDS, initial: 50, now: clock.now });
    run(slow, clock, { baseHoldMs: 100, capacityPerMs: 2 }, 10_000);
    // Ten a second at most where 100 ms holds need one in flight: down to the floor, and no further.
    const seen = run(slow, clock, { baseHoldMs: 100, capacityPerMs: 0.01 }, 120_000);
    expect(Math.min(...seen)).toBe(10);
    expect(percentile(seen.slice(60_000), 0.9)).toBeLessThanOrEqual(16);
  });

  it('measures the base hold on messages held under the halved window, not on a burst of older ones', () => {
    const clock = fakeClock();
    const window = creditWindow({ ...BOUNDS, initial: 100, now: clock.now });
    // S/4HANA at 50 ms, a message held 120 ms, the service no bound: the window grows to its ceiling, and the rate
    // with it, until a probe halves it.
    const service = { baseHoldMs: 120, capacityPerMs: 2 };
    let due = 0;
    let before = window.current();
    for (let t = 0; window.current() > before / 2 + 1 || before < 200; t += 1) {
      expect(t).toBeLessThan(60_000);
      before = window.current();
      while (window.held() < window.current()) window.received(1000);
      clock.advance(1);
      due += Math.min(window.held() / service.baseHoldMs, service.capacityPerMs);
      for (; due >= 1; due -= 1) window.settled();
    }
    expect(window.current()).toBe(100);
    // What the broker still sends on the credit it granted before, and the messages of the larger window: half of
    // them settle over a while, then the rest in one burst, as a batched read's events do.
    for (let i = 0; i < 30; i += 1) window.received(1000);
    for (let i = 0; i < 100; i += 1) {
      clock.advance(0.6);
      window.settled();
    }
    for (let i = 0; i < 100; i += 1) {
      clock.advance(0.05);
      window.settled();
    }
    // Back to the steady service: the rate still needs the whole window, so no sample may shrink it below the probe's.
    const seen = run(window, clock, service, 5_000);
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(100);
    expect(seen.at(-1)).toBe(200);
  });

  it('learns nothing while no backlog fills it', () => {
    const clock = fakeClock();
    const window = creditWindow({ ...BOUNDS, initial: 50, now: clock.now });
    // Ten messages at a time, each held 120 ms: the window bounds nothing, so it neither grows nor shrinks.
    for (let i = 0; i < 2000; i += 1) {
      for (let j = 0; j < 10; j += 1) window.received(1000);
      clock.advance(120);
      for (let j = 0; j < 10; j += 1) window.settled();
    }
    expect(window.current()).toBe(50);
  });

  it('catches up with an S/4HANA that became slower for good instead of falling to its floor', () => {
    const clock = fakeClock();
    const window = creditWindow({ ...BOUNDS, initial: 50, now: clock.now });
    run(window, clock, { baseHoldMs: 120, capacityPerMs: 0.5 }, 30_000);
    // Now 480 ms a message: 0.5/ms × 480 = 240 in flight would be needed, more than the ceiling.
    const seen = run(window, clock, { baseHoldMs: 480, capacityPerMs: 0.5 }, 120_000);
    expect(percentile(seen.slice(60_000), 0.1)).toBe(200);
  });

  it('keeps the unsettled bytes within its budget whatever the rate asks for', () => {
    const clock = fakeClock();
    const window = creditWindow({ ...BOUNDS, initial: 200, now: clock.now });
    window.received(1024 * 1024);
    expect(window.current()).toBe(50);
    window.received(5 * 1024 * 1024);
    expect(window.current()).toBe(10);
  });

  it('forgets the messages of a lost connection but keeps its window', () => {
    const clock = fakeClock();
    const window = creditWindow({ ...BOUNDS, initial: 50, now: clock.now });
    run(window, clock, { baseHoldMs: 120, capacityPerMs: 2 }, 5_000);
    const learned = window.current();
    expect(learned).toBeGreaterThan(50);
    window.reset();
    expect(window.held()).toBe(0);
    window.settled(); // a settle of the lost connection's message: nothing to count
    expect(window.held()).toBe(0);
    expect(window.current()).toBe(learned);
  });

  it('is fixed at AMQP_PREFETCH when that is set', () => {
    const clock = fakeClock();
    const window = fixedWindow(7);
    const seen = run(window, clock, { baseHoldMs: 120, capacityPerMs: 2 }, 5_000);
    expect(new Set(seen)).toEqual(new Set([7]));
  });
});
