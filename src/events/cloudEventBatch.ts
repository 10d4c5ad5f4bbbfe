// CloudEvents HTTP batch mode (HTTP binding 3.3): the body is a JSON array of structured-mode events. Each element
// is handed on as its own bytes, exactly as sent, so the parser judges every event on its own (a duplicate key in
// one event refuses that event, not the batch) and a refused event is stored as it came.
// Pure: no I/O, never throws.
import { clip, typeName } from './reasonText.js';
import { forEachStructural, MAX_NESTING, nestingDepth, utf8 } from './strictJson.js';

export const BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';
// What each element is: a structured-mode event in the JSON format.
export const BATCH_ELEMENT_CONTENT_TYPE = 'application/cloudevents+json';

export type SplitResult = { ok: true; events: Buffer[] } | { ok: false; reason: string };

export function splitBatch(body: Buffer): SplitResult {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return fail('batch body is not valid UTF-8');
  }
  // Checked before parsing, as for single events: hostile nesting never reaches recursive code.
  if (nestingDepth(text) > MAX_NESTING + 1)
    return fail(`batch is nested deeper than ${MAX_NESTING + 1} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return fail(`batch body is not valid JSON (${clip((err as Error).message, 120)})`);
  }
  if (!Array.isArray(value)) return fail(`a CloudEvents batch must be a JSON array, got ${typeName(value)}`);
  return { ok: true, events: elements(text) };
}

/** The raw text of each top-level element of a JSON array that JSON.parse accepted. */
function elements(text: string): Buffer[] {
  const found: Buffer[] = [];
  let depth = 0;
  let start = 0;
  forEachStructural(text, (c, i) => {
    if (c === 0x5b || c === 0x7b) {
      if (++depth === 1) start = i + 1;
    } else if ((c === 0x5d || c === 0x7d) && --depth === 0) {
      push(found, text.slice(start, i));
    } else if (c === 0x2c && depth === 1) {
      push(found, text.slice(start, i));
      start = i + 1;
    }
  });
  return found;
}

function push(found: Buffer[], element: string): void {
  const trimmed = element.trim();
  if (trimmed !== '') found.push(Buffer.from(trimmed, 'utf8')); // only `[]` has an empty element
}

function fail(reason: string): SplitResult {
  return { ok: false, reason };
}
