// One flush at a time; what comes while it runs goes together in the next. Flushes are held open with gates, so
// what is asserted is the order of events, never how long anything took.
import { describe, expect, it } from 'vitest';
import { whileBusy } from '../../src/leasedOutbox/whileBusy.js';
import { type Gate, gate } from '../support/gate.js';

/** A flush that records each batch and finishes when the test opens that batch's gate. */
function heldFlush() {
  const batches: string[][] = [];
  const gates: Gate[] = [];
  const failing = new Set<number>();
  const flush = async (items: string[]) => {
    const index = batches.push([...items]) - 1;
    const held = gate();
    gates.push(held);
    await held.opened;
    if (failing.has(index)) throw new Error(`batch ${index} failed`);
  };
  return { batches, gates, failing, flush };
}

const settled = (promise: Promise<void>) =>
  promise.then(
    () => 'done',
    (err: Error) => err.message,
  );

describe('gathering items while a flush is in flight', () => {
  it('flushes an item at once and alone when nothing is running', async () => {
    const held = heldFlush();
    const add = whileBusy(held.flush);
    const first = add('a');
    expect(held.batches).toEqual([['a']]);
    held.gates[0]?.open();
    expect(await settled(first)).toBe('done');
  });

  it('flushes what came meanwhile together once the running flush ends, each call settling with its own', async () => {
    const held = heldFlush();
    const add = whileBusy(held.flush);
    const a = settled(add('a'));
    const b = settled(add('b'));
    const c = settled(add('c'));
    expect(held.batches).toEqual([['a']]);
    held.gates[0]?.open();
    expect(await a).toBe('done');
    expect(held.batches).toEqual([['a'], ['b', 'c']]);
    const d = settled(add('d'));
    held.gates[1]?.open();
    expect([await b, await c]).toEqual(['done', 'done']);
    expect(held.batches).toEqual([['a'], ['b', 'c'], ['d']]);
    held.gates[2]?.open();
    expect(await d).toBe('done');
  });

  it('fails only the calls whose flush failed, and still runs the next', async () => {
    const held = heldFlush();
    held.failing.add(0);
    const add = whileBusy(held.flush);
    const a = settled(add('a'));
    const b = settled(add('b'));
    held.gates[0]?.open();
    expect(await a).toBe('batch 0 failed');
    expect(held.batches).toEqual([['a'], ['b']]);
    held.gates[1]?.open();
    expect(await b).toBe('done');
  });
});
