// Texts in one locale: the catalog of its language, dates and day counts formatted by Intl for the locale.
import { fillMessage, statusText } from '../../notifications/catalogText.js';
import { keptPerKey } from '../../notifications/keptPerKey.js';
import { catalogLanguage } from '../../notifications/languages.js';
import { CATALOGS, type MessageKey } from './catalogs.js';

export interface Messages {
  /** The BCP 47 tag the texts are in. */
  locale: string;
  /** The catalog's message with its `{placeholders}` filled. */
  t(key: MessageKey, values?: Record<string, string>): string;
  /** A calendar date (YYYY-MM-DD), e.g. "12 Jan 2027" or "12. Jan. 2027". */
  date(isoDate: string): string;
  /** A signed day count, e.g. "+28 days", "−1 Tag". */
  days(n: number): string;
  /** A portal status by name; an unknown one as it is. */
  status(status: string, form: 'status' | 'subjectStatus'): string;
}

// Building the Intl formatters is most of what rendering an email costs, and they keep no state: one
// Messages per tag and fallback serves every email.
const messagesPer = keptPerKey<Messages>(100);

/** Texts for `tag`; a tag without a catalog falls back to `fallback`, which must have one (config checks). */
export function messagesFor(tag: string, fallback: string): Messages {
  return messagesPer(`${tag}\n${fallback}`, () => Object.freeze(buildMessages(tag, fallback)));
}

function buildMessages(tag: string, fallback: string): Messages {
  const locale = catalogLanguage(tag) === undefined ? fallback : tag;
  const language = catalogLanguage(locale) ?? 'en';
  const { messages, dateLocale } = CATALOGS[language];
  // A tag naming only the language formats dates the catalog's way; a tag with a region its own way.
  const formatLocale = new Intl.Locale(locale).region === undefined ? dateLocale : locale;
  // Dates are calendar days, not instants: formatted in UTC so no time zone can shift them by one.
  const dates = new Intl.DateTimeFormat(formatLocale, {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    timeZone: 'UTC',
  });
  const plural = new Intl.PluralRules(formatLocale);
  const numbers = new Intl.NumberFormat(formatLocale, { signDisplay: 'exceptZero' });

  const t = (key: MessageKey, values?: Record<string, string>) => fillMessage(messages[key], values);
  return {
    locale,
    t,
    date: (isoDate) => dates.format(new Date(`${isoDate}T00:00:00Z`)),
    days: (n) =>
      t(plural.select(Math.abs(n)) === 'one' ? 'days.one' : 'days.other', { n: numbers.format(n) }),
    status: (status, form) => statusText(messages, status, form),
  };
}
