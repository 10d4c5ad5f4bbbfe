// JSON read more strictly than JSON.parse: a message that two JSON parsers could read differently (a second
// "id" or "data", a lone surrogate, a number beyond double range) is refused rather than guessed at.
import { clip, LONE_SURROGATE, show } from './reasonText.js';

export type JsonResult = { ok: true; value: unknown } | { ok: false; reason: string };

export const MAX_NESTING = 32;
const NUMBER = /-?[\d.eE+-]+/y;
export const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses a UTF-8 JSON body; `basePath` (a JSON pointer) prefixes the places named in reasons. */
export function parseStrictJson(body: Buffer, basePath: string): JsonResult {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return failure('body is not valid UTF-8');
  }
  if (text.trim() === '') return failure('body is empty');
  if (nestingDepth(text) > MAX_NESTING) return failure(`JSON is nested deeper than ${MAX_NESTING} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // V8 quotes the offending input in its message: clipped and made printable before it becomes a reason.
    return failure(`body is not valid JSON (${clip((err as Error).message, 120)})`);
  }
  const problem = checkStrictJson(text, basePath);
  return problem === undefined ? { ok: true, value } : failure(problem);
}

// Counted on the raw text, before parsing, so that hostile nesting never reaches recursive code.
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  forEachStructural(text, (c) => {
    if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  });
  return max;
}

/** Calls `visit` with each character code and position outside JSON strings (strings themselves skipped). */
export function forEachStructural(text: string, visit: (c: number, index: number) => void): void {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else visit(c, i);
  }
}

type Frame = { keys: Set<string>; key: string } | { keys: undefined; index: number };

/**
 * One linear pass over text that JSON.parse accepted, finding what it silently tolerates: duplicate keys
 * (the last one wins, so a second "id" or "data" could be smuggled past a reader that keeps the first),
 * prototype-poisoning keys (`__proto__`, `constructor.prototype`, as fastify's secure-json-parse refuses),
 * escaped lone surrogates and numbers beyond double range (which JSON.parse turns into Infinity).
 */
function checkStrictJson(text: string, basePath: string): string | undefined {
  const stack: Frame[] = [];
  let expectKey = false;
  const where = () => {
    const segments = stack.slice(0, -1).map((f) => (f.keys ? f.key : String(f.index)));
    const pointer =
      basePath + segments.map((s) => `/${s.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
    return pointer === '' ? 'at the top level' : `in ${clip(pointer, 60)}`;
  };
  const placeOf = (isKey: boolean) => {
    if (isKey) return where();
    stack.push({ keys: undefined, index: 0 });
    const here = where();
    stack.pop();
    return here;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack.at(-1);
    if (c === 0x22) {
      const start = i;
      let escaped = false;
      let surrogateEscape = false;
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) {
        if (text.charCodeAt(i) !== 0x5c) continue;
        escaped = true;
        i++;
        if (text[i] === 'u' && /^[dD][89a-fA-F]/.test(text.slice(i + 1, i + 3))) surrogateEscape = true;
      }
      const isKey = top?.keys !== undefined && expectKey;
      if (!isKey && !surrogateEscape) continue;
      // Without a backslash a string is its text between the quotes: only escapes need decoding, and the place
      // is named only for a refusal (decoding and naming every key took half of the pass). A key is placed at
      // the object holding it, a value at its own position (a stand-in frame adds it).
      const value = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i);
      if (surrogateEscape && LONE_SURROGATE.test(value)) {
        return `JSON string with an unpaired UTF-16 surrogate ${isKey ? 'as a key ' : ''}${placeOf(isKey)}`;
      }
      if (top?.keys === undefined || !isKey) continue;
      expectKey = false;
      const parent = stack.at(-2);
      if (value === '__proto__' || (value === 'prototype' && parent?.keys && parent.key === 'constructor')) {
        return `forbidden key "${value}" ${placeOf(isKey)}`;
      }
      if (top.keys.has(value)) return `duplicate key ${show(value)} ${placeOf(isKey)}`;
      top.keys.add(value);
      top.key = value;
    } else if (c === 0x7b) {
      stack.push({ keys: new Set(), key: '' });
      expectKey = true;
    } else if (c === 0x5b) {
      stack.push({ keys: undefined, index: 0 });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c) {
      if (top?.keys) expectKey = true;
      else if (top) top.index++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const token = NUMBER.exec(text)?.[0] ?? '';
      if (!Number.isFinite(Number(token))) {
        stack.push({ keys: undefined, index: 0 });
        const place = where();
        stack.pop();
        return `number ${clip(token, 30)} is beyond the range of a double ${place}`;
      }
      i += token.length - 1;
    }
  }
  return undefined;
}

function failure(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}
