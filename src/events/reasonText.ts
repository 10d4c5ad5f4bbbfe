// Reasons end up in logs, the dead_letter table and API answers: short and printable, whatever the input, and
// without the email addresses it may quote.
import { scrubAddresses } from '../telemetry/scrubAddresses.js';

// Control and invisible characters: format characters (bidi overrides, zero-width space), line separators and
// lone surrogates. The parser refuses values with one; reasons show each as '?'.
export const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const UNPRINTABLE_ALL = new RegExp(UNPRINTABLE.source, 'gu');
export const LONE_SURROGATE = /\p{Cs}/u;

export function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}

/** A short, printable rendering of a rejected value for the reason text. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `${v}n` : v));
  } catch {
    // A value JSON cannot express (e.g. a cycle): its type is still worth saying.
  }
  return clip(text ?? typeName(value), 60);
}

// An address is at most this long (RFC 5321): one that starts within what a reason keeps ends within its window.
const MAX_ADDRESS = 254;

/**
 * At most `max` code points (never half a surrogate pair), with every email address as `[address]` (as the `err`
 * serializer writes them) and every unprintable character as '?'.
 */
export function clip(text: string, max: number): string {
  const window = text.length > max * 2 + MAX_ADDRESS ? text.slice(0, max * 2 + MAX_ADDRESS) : text;
  const scrubbed = scrubAddresses(window);
  const points = Array.from(scrubbed.length > max * 2 ? scrubbed.slice(0, max * 2) : scrubbed);
  const printable = points.slice(0, max).join('').replace(UNPRINTABLE_ALL, '?');
  return points.length > max || scrubbed.length > max * 2 || window !== text ? `${printable}…` : printable;
}

/** A refusal with its reason, as the parser's steps return it. */
export type Failure = { ok: false; reason: string };

export function fail(reason: string): Failure {
  return { ok: false, reason };
}
