// Reasons end up in logs, the dead_letter table and API answers: short and printable, whatever the input.

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

/** At most `max` code points (never half a surrogate pair), with every unprintable character as '?'. */
export function clip(text: string, max: number): string {
  const points = Array.from(text.length > max * 2 ? text.slice(0, max * 2) : text);
  const printable = points.slice(0, max).join('').replace(UNPRINTABLE_ALL, '?');
  return points.length > max || text.length > max * 2 ? `${printable}…` : printable;
}

/** A refusal with its reason, as the parser's steps return it. */
export type Failure = { ok: false; reason: string };

export function fail(reason: string): Failure {
  return { ok: false, reason };
}
