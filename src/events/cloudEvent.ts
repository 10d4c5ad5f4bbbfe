// Turns a received message into a validated event, or a precise reason why it is not one.
// Pure: no I/O, never throws. Both CloudEvents modes are accepted:
// - structured: the whole event is the JSON body (what S/4HANA sends through Event Mesh);
// - binary: attributes travel beside the body (AMQP application-properties `cloudEvents:*`, HTTP `ce-*`
//   headers), and the body is the event's data.
// The body is read by strictJson.ts, which refuses what two JSON parsers could read differently.
import { attributeValues } from './binaryAttributes.js';
import { checkContentType } from './contentType.js';
import type { EventKeys } from './family.js';
import type { InboundMessage, ParsedEvent } from './parsedEvent.js';
import { payloadHashes } from './payloadHash.js';
import { clip, type Failure, fail, show, UNPRINTABLE } from './reasonText.js';
import { parseStrictJson } from './strictJson.js';

export type { InboundMessage, ParsedEvent } from './parsedEvent.js';

export type ParseResult = { ok: true; event: ParsedEvent } | { ok: false; reason: string };

// W3C Trace Context: version-traceid-parentid-flags, lower-case hex; an all-zero trace or parent id is invalid.
const TRACEPARENT = /^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
// Printable text only (UNPRINTABLE): these values reach logs, SQL parameters and email headers. Lone
// surrogates among them PostgreSQL would store as U+FFFD, merging two identities into one.
const TEXT_ATTRIBUTES = [
  ['id', 256],
  ['source', 512],
  ['type', 256],
] as const;

/** `families`: whose types are handled; an event of another type is only recorded. */
export function parseCloudEvent(
  message: InboundMessage,
  maxBytes: number,
  families: readonly EventKeys[],
): ParseResult {
  try {
    return parse(message, maxBytes, families);
  } catch (err) {
    // parse() means to turn every input into a result; should one still throw, the message is refused here
    // rather than released by the transport's fallback and redelivered forever, uncounted.
    return fail(`event could not be parsed (${clip(String((err as Error)?.message ?? err), 120)})`);
  }
}

function parse(message: InboundMessage, maxBytes: number, families: readonly EventKeys[]): ParseResult {
  if (message.unreadable !== undefined) return fail(message.unreadable);
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

  const body = parseStrictJson(message.body, binary ? '/data' : '');
  if (!body.ok) return body;
  let event: Record<string, unknown>;
  if (binary) {
    const attributes = attributeValues(message.binaryAttributes);
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

  const named = familyKey(families, type, own(event, 'data'));
  if (!named.ok) return named;
  const { family, key } = named;
  // In binary mode the content type is the event's datacontenttype (as the CloudEvents bindings define), so the
  // hashes of one event agree whatever the mode.
  return {
    ok: true,
    event: {
      source,
      id,
      type,
      family,
      key,
      ...traceContext(event),
      ...payloadHashes(event),
    },
  };
}

type Named = { family: string; key: string } | { family: undefined; key: undefined };

/** The family a type belongs to and the key its data names, or why an event of a family is refused. */
function familyKey(
  families: readonly EventKeys[],
  type: string,
  data: unknown,
): ({ ok: true } & Named) | Failure {
  const family = families.find((candidate) => candidate.owns(type));
  if (family === undefined) return { ok: true, family: undefined, key: undefined };
  const named = family.keyOf(type, data);
  return named.ok ? { ok: true, family: family.name, key: named.key } : named;
}

/**
 * The distributed-tracing extension, if it is a valid W3C traceparent. Never a reason to refuse an event: a
 * malformed one only means the trace starts here.
 */
function traceContext(event: Record<string, unknown>): { traceparent?: string; tracestate?: string } {
  const traceparent = own(event, 'traceparent');
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return {};
  const tracestate = own(event, 'tracestate');
  return typeof tracestate === 'string' && tracestate.length <= 512 && !UNPRINTABLE.test(tracestate)
    ? { traceparent, tracestate }
    : { traceparent };
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
