// The languages emails are written in. Every family's catalogs are typed by Language, so a family cannot leave
// one out, and MAIL_LOCALE and mail_recipient's locales are checked against this one list.

export const LANGUAGES = ['en', 'de'] as const;

export type Language = (typeof LANGUAGES)[number];

// Parsing a tag (Intl.Locale) is dearer than the lookup it serves, and every email asks: the answer is kept per
// tag. Tags come from mail_recipient and MAIL_LOCALE, so there are few; the cap only keeps a stray variety of
// them from growing the cache.
const CACHE_SIZE = 100;
const cache = new Map<string, Language | undefined>();

/** The language subtag of a tag that has a catalog, or undefined: unknown language or not a BCP 47 tag. */
export function catalogLanguage(tag: string): Language | undefined {
  if (cache.has(tag)) return cache.get(tag);
  if (cache.size >= CACHE_SIZE) cache.clear();
  const language = parse(tag);
  cache.set(tag, language);
  return language;
}

function parse(tag: string): Language | undefined {
  try {
    const { language } = new Intl.Locale(tag);
    return LANGUAGES.find((known) => known === language);
  } catch {
    return undefined;
  }
}
