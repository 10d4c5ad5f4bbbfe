// Turns a received message into a validated event, or a precise reason why it is not one.
// Pure: no I/O, never throws. Both CloudEvents modes are accepted:
// - structured: the whole event is the JSON body (what S/4HANA sends through Event Mesh);
// - binary: attributes travel beside the body (AMQP application-properties `cloudEvents:*`, HTTP `ce-*`
//   headers), and the body is the event's data.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

export interface InboundMessage {
  body: Buffer;
  contentType: string | undefined;
  /** Binary-mode attributes with their transport prefix removed (`id`, `source`, ...); empty in structured mode. */
  binaryAttributes: Record<string, unknown>;
}

export interface ParsedEvent {
  source: string;
  id: string;
  type: string;
  /** The S/4HANA sales order key, validated for use inside an OData key; undefined for other event types. */
  salesOrder: string | undefined;
  /** SHA-256 of the canonical event: tells a redelivery from a different payload under the same identity. */
  payloadHash: string;
}

export type ParseResult = { ok: true; event: ParsedEvent } | { ok: false; reason: string };

export const SALES_ORDER_TYPE_PREFIX = 'sap.s4.beh.salesorder.v1.SalesOrder.';
const SALES_ORDER_KEY = /^[A-Za-z0-9]{1,10}$/;
// Printable text only: these values reach logs, SQL parameters and email headers.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const MAX_NESTING = 32;
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseCloudEvent(message: InboundMessage, maxBytes: number): ParseResult {
  if (message.body.length > maxBytes) {
    return fail(`message body of ${message.body.length} bytes exceeds the limit of ${maxBytes} bytes`);
  }
  const mediaType = message.contentType?.split(';')[0]?.trim().toLowerCase();
  const binary = Object.keys(message.binaryAttributes).length > 0;
  if (mediaType !== undefined && mediaType !== '' && !JSON_MEDIA_TYPE.test(mediaType)) {
    return fail(`content type "${clip(message.contentType)}" is not JSON`);
  }
  const body = parseJson(message.body);
  if (!body.ok) return body;
  const event = binary ? { ...message.binaryAttributes, data: body.value } : body.value;
  if (!isObject(event)) return fail('event is not a JSON object');

  if (event.specversion !== '1.0') return fail(`specversion must be "1.0", got ${show(event.specversion)}`);
  for (const [name, max] of [
    ['id', 256],
    ['source', 512],
    ['type', 256],
  ] as const) {
    const problem = checkText(name, event[name], max);
    if (problem !== undefined) return fail(problem);
  }
  const { id, source, type } = event as { id: string; source: string; type: string };

  let salesOrder: string | undefined;
  if (type.startsWith(SALES_ORDER_TYPE_PREFIX)) {
    if (!isObject(event.data)) return fail(`data must be a JSON object, got ${show(event.data)}`);
    const key = event.data.SalesOrder;
    if (typeof key !== 'string' || !SALES_ORDER_KEY.test(key)) {
      return fail(`data.SalesOrder must be 1 to 10 letters or digits, got ${show(key)}`);
    }
    salesOrder = key;
  }
  const payloadHash = createHash('sha256')
    .update(canonicalize(event) ?? '')
    .digest('hex');
  return { ok: true, event: { source, id, type, salesOrder, payloadHash } };
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false; reason: string } {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return fail('body is not valid UTF-8');
  }
  if (nestingDepth(text) > MAX_NESTING) return fail(`JSON is nested deeper than ${MAX_NESTING} levels`);
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return fail(`body is not valid JSON (${(err as Error).message.slice(0, 120)})`);
  }
}

// Counted on the raw text, before parsing, so that hostile nesting never reaches recursive code.
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

function checkText(name: string, value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return `${name} must be a string, got ${show(value)}`;
  if (value.trim() === '') return `${name} must not be empty`;
  if (value.length > max) return `${name} is longer than ${max} characters`;
  if (value.search(CONTROL_CHARACTERS) !== -1) return `${name} contains control characters`;
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short, printable rendering of a rejected value for the reason text. */
function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  return clip(JSON.stringify(value) ?? String(value));
}

function clip(text: string | undefined): string {
  const printable = (text ?? '').replace(CONTROL_CHARACTERS, '?');
  return printable.length > 60 ? `${printable.slice(0, 60)}…` : printable;
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}
