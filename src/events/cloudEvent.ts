// Turns a received message into a validated event, or a precise reason why it is not one.
// Pure: no I/O, never throws. Both CloudEvents modes are accepted:
// - structured: the whole event is the JSON body (what S/4HANA sends through Event Mesh);
// - binary: attributes travel beside the body (AMQP application-properties `cloudEvents:*`, HTTP `ce-*`
//   headers), and the body is the event's data.
// Stricter than JSON.parse on purpose: a message that two JSON parsers could read differently (a second "id"
// or "data", a lone surrogate, a number beyond double range) is refused rather than guessed at.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

export interface InboundMessage {
  body: Buffer;
  contentType: string | undefined;
  /** Binary-mode attributes with their transport prefix removed (`id`, `source`, ...); empty in structured mode. */
  binaryAttributes: Record<string, unknown>;
  /** Attribute names the transport carried more than once (e.g. under both AMQP prefixes): refused. */
  repeatedAttributes?: string[];
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
type Failure = { ok: false; reason: string };

export const SALES_ORDER_TYPE_PREFIX = 'sap.s4.beh.salesorder.v1.SalesOrder.';
export const SALES_ORDER_KEY = /^[A-Za-z0-9]{1,10}$/;
// Printable text only: these values reach logs, SQL parameters and email headers. Besides control characters
// this refuses invisible format characters (bidi overrides, zero-width space), line separators and lone
// surrogates (which PostgreSQL would store as U+FFFD, merging two identities into one).
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const UNPRINTABLE_ALL = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
const LONE_SURROGATE = /\p{Cs}/u;
const MAX_NESTING = 32;
const NUMBER = /-?[\d.eE+-]+/y;
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
// The CloudEvents spec: attribute names are lower-case ASCII letters and digits.
const ATTRIBUTE_NAME = /^[a-z0-9]+$/;
const TEXT_ATTRIBUTES = [
  ['id', 256],
  ['source', 512],
  ['type', 256],
] as const;
// What the AMQP client hands over for an amqp-value body that is not a string (see amqpConsumer toInbound).
const AMQP_VALUE_TYPE = 'amqp-1.0';
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseCloudEvent(message: InboundMessage, maxBytes: number): ParseResult {
  try {
    return parse(message, maxBytes);
  } catch (err) {
    // parse() means to turn every input into a result; should one still throw, the message is refused here
    // rather than released by the transport's fallback and redelivered forever, uncounted.
    return fail(`event could not be parsed (${clip(String((err as Error)?.message ?? err), 120)})`);
  }
}

function parse(message: InboundMessage, maxBytes: number): ParseResult {
  if (message.body.length > maxBytes) {
    return fail(`message body of ${message.body.length} bytes exceeds the limit of ${maxBytes} bytes`);
  }
  const contentType = checkContentType(message.contentType);
  if (!contentType.ok) return contentType;
  const repeated = message.repeatedAttributes?.[0];
  // Like a duplicate JSON key: which of two ids is the identity would depend on the reader.
  if (repeated !== undefined) return fail(`binary attribute ${show(repeated)} is given more than once`);
  const attributeNames = Object.keys(message.binaryAttributes);
  const binary = attributeNames.length > 0 && !contentType.structured;

  const body = parseJson(message.body, binary ? '/data' : '');
  if (!body.ok) return body;
  let event: Record<string, unknown>;
  if (binary) {
    const attributes = binaryAttributes(message.binaryAttributes);
    if (!attributes.ok) return attributes;
    event = { ...attributes.value, data: body.value };
    event.datacontenttype = message.contentType ?? attributes.value.datacontenttype;
  } else {
    if (!isObject(body.value)) {
      return fail(`the structured event must be a JSON object, got ${show(body.value)}`);
    }
    event = body.value;
    if (attributeNames.length > 0) {
      const problem = compareAttributes(message.binaryAttributes, event);
      if (problem !== undefined) return fail(problem);
    }
  }

  if (own(event, 'specversion') !== '1.0') {
    return fail(`specversion must be "1.0", got ${show(own(event, 'specversion'))}`);
  }
  for (const [name, max] of TEXT_ATTRIBUTES) {
    const problem = checkText(name, own(event, name), max);
    if (problem !== undefined) return fail(problem);
  }
  const { id, source, type } = event as { id: string; source: string; type: string };

  let salesOrder: string | undefined;
  if (type.startsWith(SALES_ORDER_TYPE_PREFIX)) {
    const data = own(event, 'data');
    if (!isObject(data)) return fail(`data must be a JSON object, got ${show(data)}`);
    const key = own(data, 'SalesOrder');
    if (typeof key !== 'string' || !SALES_ORDER_KEY.test(key)) {
      return fail(`data.SalesOrder must be 1 to 10 letters or digits, got ${show(key)}`);
    }
    salesOrder = key;
  }
  return { ok: true, event: { source, id, type, salesOrder, payloadHash: payloadHash(event) } };
}

/**
 * The hash covers attributes and data in canonical JSON (RFC 8785), so key order and whitespace do not
 * matter, and neither does the mode: the binary-mode content type is the event's datacontenttype (as the
 * CloudEvents AMQP binding defines), compared by media type, and an absent one means JSON.
 */
function payloadHash(event: Record<string, unknown>): string {
  const contentType = own(event, 'datacontenttype') ?? 'application/json';
  const normal = {
    ...event,
    datacontenttype: typeof contentType === 'string' ? mediaType(contentType) : contentType,
  };
  return createHash('sha256')
    .update(canonicalize(normal) ?? '')
    .digest('hex');
}

function checkContentType(contentType: string | undefined): { ok: true; structured: boolean } | Failure {
  if (contentType === AMQP_VALUE_TYPE) return fail('body is an AMQP value section, not JSON data');
  const media = mediaType(contentType ?? '');
  if (media === '') return { ok: true, structured: false };
  if (media === 'application/cloudevents-batch+json') return fail('batched CloudEvents are not supported');
  if (!JSON_MEDIA_TYPE.test(media)) return fail(`content type ${show(contentType)} is not JSON`);
  for (const parameter of (contentType ?? '').split(';').slice(1)) {
    const [name = '', value = ''] = parameter.split('=', 2).map((part) => part.trim());
    const charset = value.replace(/^"(.*)"$/, '$1').toLowerCase();
    if (name.toLowerCase() === 'charset' && charset !== 'utf-8' && charset !== 'utf8') {
      return fail(`content type charset ${show(value)} is not UTF-8`);
    }
  }
  // The CloudEvents bindings: this media type marks structured mode, whatever else the message carries.
  return { ok: true, structured: media.startsWith('application/cloudevents') };
}

function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

function parseJson(body: Buffer, basePath: string): { ok: true; value: unknown } | Failure {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return fail('body is not valid UTF-8');
  }
  if (text.trim() === '') return fail('body is empty');
  if (nestingDepth(text) > MAX_NESTING) return fail(`JSON is nested deeper than ${MAX_NESTING} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // V8 quotes the offending input in its message: clipped and made printable before it becomes a reason.
    return fail(`body is not valid JSON (${clip((err as Error).message, 120)})`);
  }
  const problem = checkStrictJson(text, basePath);
  return problem === undefined ? { ok: true, value } : fail(problem);
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
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack.at(-1);
    if (c === 0x22) {
      const start = i;
      let surrogateEscape = false;
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) {
        if (text.charCodeAt(i) !== 0x5c) continue;
        i++;
        if (text[i] === 'u' && /^[dD][89a-fA-F]/.test(text.slice(i + 1, i + 3))) surrogateEscape = true;
      }
      const isKey = top?.keys !== undefined && expectKey;
      if (!isKey && !surrogateEscape) continue;
      const value = JSON.parse(text.slice(start, i + 1)) as string;
      // A key is placed at the object holding it, a value at its own position (a stand-in frame adds it).
      if (!isKey) stack.push({ keys: undefined, index: 0 });
      const place = where();
      if (!isKey) stack.pop();
      if (surrogateEscape && LONE_SURROGATE.test(value)) {
        return `JSON string with an unpaired UTF-16 surrogate ${isKey ? 'as a key ' : ''}${place}`;
      }
      if (top?.keys === undefined || !isKey) continue;
      expectKey = false;
      const parent = stack.at(-2);
      if (value === '__proto__' || (value === 'prototype' && parent?.keys && parent.key === 'constructor')) {
        return `forbidden key "${value}" ${place}`;
      }
      if (top.keys.has(value)) return `duplicate key ${show(value)} ${place}`;
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

/**
 * Binary-mode attributes as JSON values. AMQP application-properties are simple types only: strings, numbers,
 * booleans, timestamps, binary; maps and lists are not allowed there, and a name must be a CloudEvents name.
 */
function binaryAttributes(
  raw: Record<string, unknown>,
): { ok: true; value: Record<string, unknown> } | Failure {
  const value: Record<string, unknown> = {};
  for (const [name, attribute] of Object.entries(raw)) {
    const label = `binary attribute ${show(name)}`;
    if (!ATTRIBUTE_NAME.test(name)) return fail(`${label} is not a CloudEvents attribute name`);
    if (name === 'data') return fail(`${label} is not allowed: in binary mode the body is the data`);
    if (typeof attribute === 'string') {
      if (LONE_SURROGATE.test(attribute)) return fail(`${label} contains an unpaired UTF-16 surrogate`);
      value[name] = attribute;
    } else if (typeof attribute === 'number') {
      if (!Number.isFinite(attribute)) return fail(`${label} is not a finite number`);
      value[name] = attribute;
    } else if (typeof attribute === 'boolean' || attribute === null) {
      value[name] = attribute;
    } else if (typeof attribute === 'bigint') {
      value[name] = attribute.toString();
    } else if (attribute instanceof Date) {
      if (Number.isNaN(attribute.getTime())) return fail(`${label} is an invalid timestamp`);
      value[name] = attribute.toISOString();
    } else if (attribute instanceof Uint8Array) {
      value[name] = Buffer.from(attribute).toString('base64');
    } else if (attribute !== undefined) {
      return fail(
        `${label} must be a string, number, boolean, timestamp or binary, got ${typeName(attribute)}`,
      );
    }
  }
  return { ok: true, value };
}

/** Structured mode with attributes beside it: they must say the same, or the identity would be ambiguous. */
function compareAttributes(raw: Record<string, unknown>, event: Record<string, unknown>): string | undefined {
  for (const name of ['specversion', 'id', 'source', 'type']) {
    if (Object.hasOwn(raw, name) && raw[name] !== own(event, name)) {
      return `binary attribute ${show(name)} disagrees with the structured event`;
    }
  }
  return undefined;
}

function checkText(name: string, value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return `${name} must be a string, got ${show(value)}`;
  if (value.trim() === '') return `${name} must not be empty`;
  if (value.length > max) return `${name} is longer than ${max} characters`;
  const bad = UNPRINTABLE.exec(value)?.[0];
  if (bad !== undefined) {
    const code = (bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
    return `${name} contains a control or invisible character (U+${code})`;
  }
  return undefined;
}

function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}

/** A short, printable rendering of a rejected value for the reason text. */
function show(value: unknown): string {
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
function clip(text: string, max: number): string {
  const points = Array.from(text.length > max * 2 ? text.slice(0, max * 2) : text);
  const printable = points.slice(0, max).join('').replace(UNPRINTABLE_ALL, '?');
  return points.length > max || text.length > max * 2 ? `${printable}…` : printable;
}

function fail(reason: string): Failure {
  return { ok: false, reason };
}
