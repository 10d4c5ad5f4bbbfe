import { describe, expect, it } from 'vitest';
import { keptPerKey } from '../../src/notifications/keptPerKey.js';

describe('a value kept per key', () => {
  it('computes a key once, undefined included, and again only after more keys than it keeps', () => {
    const computed: string[] = [];
    const kept = keptPerKey<string | undefined>(2);
    const ask = (key: string) =>
      kept(key, () => {
        computed.push(key);
        return key === 'none' ? undefined : key.toUpperCase();
      });
    expect([ask('de'), ask('none'), ask('de'), ask('none')]).toEqual(['DE', undefined, 'DE', undefined]);
    expect(computed).toEqual(['de', 'none']);
    // A third key is past the two it keeps: it starts over, so 'de' is computed anew.
    expect(ask('en')).toBe('EN');
    expect(ask('de')).toBe('DE');
    expect(computed).toEqual(['de', 'none', 'en', 'de']);
  });
});
