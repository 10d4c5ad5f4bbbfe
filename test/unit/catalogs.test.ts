import { describe, expect, it } from 'vitest';
import { CATALOGS } from '../../src/families/salesOrder/catalogs.js';
import { catalogLanguage, LANGUAGES } from '../../src/notifications/languages.js';

const placeholders = (message: string) => [...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('message catalogs', () => {
  const catalogs = LANGUAGES.map((language) => ({
    language,
    messages: (CATALOGS[language]?.messages ?? {}) as Record<string, string>,
  }));
  const reference = catalogs.find((catalog) => catalog.language === 'en') as (typeof catalogs)[number];
  const others = catalogs.filter((catalog) => catalog !== reference);

  it('exist for English and German', () => {
    expect(LANGUAGES).toEqual(expect.arrayContaining(['en', 'de']));
  });

  it.each(others)('$language has every key of en, and no other', ({ messages }) => {
    expect(Object.keys(messages).sort()).toEqual(Object.keys(reference.messages).sort());
  });

  it.each(others)('$language fills the same placeholders as en in every message', ({ messages }) => {
    for (const [key, message] of Object.entries(reference.messages)) {
      expect({ key, placeholders: placeholders(messages[key] ?? '') }).toEqual({
        key,
        placeholders: placeholders(message),
      });
    }
  });

  it('has no empty message', () => {
    for (const { messages } of catalogs) {
      for (const message of Object.values(messages)) expect(message.trim()).not.toBe('');
    }
  });

  it('resolves a tag to the catalog of its language, and nothing for other languages or bad tags', () => {
    expect(catalogLanguage('de-AT')).toBe('de');
    expect(catalogLanguage('EN')).toBe('en');
    expect(catalogLanguage('fr')).toBeUndefined();
    expect(catalogLanguage('not a tag')).toBeUndefined();
  });

  it('gives the same answers once a tag is kept, and past the cap of kept tags', () => {
    const tags = ['de-AT', 'EN', 'fr', 'not a tag'];
    const first = tags.map(catalogLanguage);
    // More tags than the cache keeps, so it is emptied on the way.
    for (let i = 0; i < 250; i++) catalogLanguage(`de-x-v${i}`);
    expect(tags.map(catalogLanguage)).toEqual(first);
    expect(tags.map(catalogLanguage)).toEqual(['de', 'en', undefined, undefined]);
  });
});
