import { describe, expect, it } from 'vitest';
import { classify } from '../../src/errors.js';
import { keyFilter, MAX_URL_LENGTH, matchCollection } from '../../src/s4/keyFilter.js';

describe('the key filter', () => {
  it('joins key terms with or, quotes doubled', () => {
    expect(keyFilter('SalesOrder', ['1000473', "A'B"], 50, MAX_URL_LENGTH)).toEqual({
      filter: "SalesOrder eq '1000473' or SalesOrder eq 'A''B'",
      keys: ['1000473', "A'B"],
    });
  });
  it('takes at most the batch size, first come first', () => {
    const keys = Array.from({ length: 80 }, (_, i) => String(1_000_000 + i));
    expect(keyFilter('SalesOrder', keys, 50, MAX_URL_LENGTH).keys).toEqual(keys.slice(0, 50));
    expect(keyFilter('SalesOrder', keys, 1, MAX_URL_LENGTH).filter).toBe("SalesOrder eq '1000000'");
  });
  it('never lets the encoded filter outgrow the room the URL has left', () => {
    const keys = Array.from({ length: 200 }, (_, i) => `K${String(i).padStart(9, '0')}`);
    for (const room of [40, 400, 1000, 3000]) {
      const { filter, keys: taken } = keyFilter('SalesOrder', keys, 200, room);
      expect(encodeURIComponent(filter).length).toBeLessThanOrEqual(room);
      // One more key would not have fitted.
      const more = keyFilter(
        'SalesOrder',
        keys.slice(0, taken.length + 1),
        200,
        Number.POSITIVE_INFINITY,
      ).filter;
      expect(encodeURIComponent(more).length).toBeGreaterThan(room);
    }
    expect(keyFilter('SalesOrder', keys, 200, 10).keys).toEqual([]);
  });
});

describe('matching a collection answer', () => {
  it('pairs each key with its entity and takes an absent order as not found', () => {
    const matched = matchCollection(
      'SalesOrder',
      ['1', '2', '3'],
      [{ SalesOrder: '3' }, { SalesOrder: '1' }],
      true,
    );
    expect([...matched]).toEqual([
      ['1', { SalesOrder: '1' }],
      ['2', null],
      ['3', { SalesOrder: '3' }],
    ]);
  });
  it('leaves absent orders unanswered when the server paged the answer', () => {
    const matched = matchCollection('SalesOrder', ['1', '2'], [{ SalesOrder: '1' }], false);
    expect([...matched.keys()]).toEqual(['1']);
  });
  it('refuses an answer with an order twice or one not asked for, transient', () => {
    const twice = () =>
      matchCollection('SalesOrder', ['1', '2'], [{ SalesOrder: '1' }, { SalesOrder: '1' }], true);
    expect(twice).toThrow(/SalesOrder 1 twice/);
    const stranger = () => matchCollection('SalesOrder', ['1'], [{ SalesOrder: '9' }], true);
    expect(stranger).toThrow(/"9", not asked for/);
    expect(() => matchCollection('SalesOrder', ['1'], [{}], true)).toThrow(/not asked for/);
    try {
      stranger();
    } catch (err) {
      expect(classify(err)).toBe('transient');
    }
  });
});
