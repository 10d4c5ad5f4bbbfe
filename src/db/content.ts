// Reading a jsonb value that a family wrote (an outbox row's content, what an S/4HANA read saw): every field is
// checked, so that a row the family never wrote is refused with a reason that names the field, never half used.
import { PermanentError } from '../errors.js';

export interface Content {
  /** A text that must be there and not empty. */
  text(name: string): string;
  /** A text, or null (also when absent). */
  optionalText(name: string): string | null;
  /** A date as YYYY-MM-DD, or null (also when absent). */
  optionalDate(name: string): string | null;
  /** A list of texts (an absent list is refused). */
  texts(name: string): string[];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Fields of `value`, which must be a JSON object; `what` names it in every refusal. */
export function contentOf(what: string, value: unknown): Content {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PermanentError(`${what}: not a JSON object`);
  }
  const record = value as Record<string, unknown>;
  const field = (name: string) => (Object.hasOwn(record, name) ? record[name] : undefined);
  const wrong = (name: string, expected: string) => new PermanentError(`${what}: ${name} is not ${expected}`);
  const optionalText = (name: string) => {
    const found = field(name);
    if (found === null || found === undefined) return null;
    if (typeof found !== 'string') throw wrong(name, 'a text or null');
    return found;
  };
  return {
    text(name) {
      const found = field(name);
      if (typeof found !== 'string' || found === '') throw wrong(name, 'a text');
      return found;
    },
    optionalText,
    optionalDate(name) {
      const found = optionalText(name);
      if (found !== null && !DATE.test(found)) throw wrong(name, 'a date (YYYY-MM-DD) or null');
      return found;
    },
    texts(name) {
      const found = field(name);
      if (!Array.isArray(found) || found.some((item) => typeof item !== 'string')) {
        throw wrong(name, 'a list of texts');
      }
      return found as string[];
    },
  };
}

/** SQL of a timestamptz as JSON carries it here: as JavaScript's toISOString writes it (UTC, milliseconds). */
export function jsonTimestamp(sql: string): string {
  return `to_char(${sql} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
