// The languages emails are written in. Every family's catalogs are typed by Language, so a family cannot leave
// one out, and MAIL_LOCALE and mail_recipient's locales are checked against this one list.
import { keptPerKey } from './keptPerKey.js';

export const LANGUAGES = ['en', 'de'] as const;

export type Language = (typeof LANGUAGES)[number];

// Parsing a tag (Intl.Locale) is dearer than the lookup it serves, and every email asks: kept per tag.
const languageOf = keptPerKey<Language | undefined>(100);

/** The language subtag of a tag that has a catalog, or undefined: unknown language or not a BCP 47 tag. */
export function catalogLanguage(tag: string): Language | undefined {
  return languageOf(tag, () => parse(tag));
}

function parse(tag: string): Language | undefined {
  try {
    const { language } = new Intl.Locale(tag);
    return LANGUAGES.find((known) => known === language);
  } catch {
    return undefined;
  }
}
