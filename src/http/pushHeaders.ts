// What the push endpoints read from a request's headers, by the CloudEvents HTTP protocol binding 1.0: the `ce-*`
// attributes, the Content-Type as sent, and the transport metadata a dead letter keeps.
import type { FastifyRequest } from 'fastify';
import { collectAttributes } from '../events/binaryAttributes.js';

// Never stored with a dead letter: credentials.
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
const CE_HEADER = /^ce-(.+)$/;
// The Content-Type as sent. fastify answers a header it cannot parse with its own 415 before any body parser
// runs, with no reason stored; so the push scope hands fastify a neutral type and keeps the sent one here, and
// the event parser decides about it, as for every other unreadable content type.
const sentContentTypes = new WeakMap<FastifyRequest, string | undefined>();

/** Keeps the Content-Type as sent and shows fastify a neutral one in its place. */
export function holdContentType(request: FastifyRequest): void {
  const sent = request.headers['content-type'];
  sentContentTypes.set(request, sent);
  if (sent !== undefined) request.headers['content-type'] = 'application/octet-stream';
}

/** The Content-Type the sender gave, before holdContentType replaced it. */
export function sentContentType(request: FastifyRequest): string | undefined {
  return sentContentTypes.get(request);
}

export type Decoded = { ok: true; attributes: Record<string, unknown> } | { ok: false; reason: string };

/**
 * The `ce-*` headers (HTTP binding 3.1.3), named without the prefix (Node gives header names in lower case),
 * each value percent-decoded once. Whether they make a binary-mode event or are the optional copies beside a
 * structured one (3.2.3) is the parser's decision, by the content type, as for AMQP.
 */
export function binaryAttributes(request: FastifyRequest): Decoded {
  const pairs: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(request.headers)) {
    const attribute = CE_HEADER.exec(name)?.[1];
    if (attribute === undefined || value === undefined) continue;
    const raw = Array.isArray(value) ? value.join(',') : value;
    const text = decodeHeaderValue(raw);
    if (text === undefined) return { ok: false, reason: `header ${name} is not valid percent-encoded UTF-8` };
    pairs.push([attribute, text]);
  }
  // Node merges a repeated header into one value, so nothing here is given twice.
  return { ok: true, attributes: collectAttributes(pairs).attributes };
}

/**
 * HTTP binding 3.1.3.2: unquote a double-quoted value (older senders), then one round of percent-decoding.
 * decodeURIComponent refuses invalid and overlong UTF-8 sequences, which the binding says to reject.
 */
function decodeHeaderValue(raw: string): string | undefined {
  const value = raw.trim();
  const unquoted =
    value.length >= 2 && value.startsWith('"') && value.endsWith('"')
      ? value.slice(1, -1).replace(/\\(.)/g, '$1')
      : value;
  try {
    return decodeURIComponent(unquoted);
  } catch {
    return undefined;
  }
}

/** Transport metadata kept with a dead letter for diagnosis: everything but credentials, and the caller. */
export function storedHeaders(request: FastifyRequest): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!SECRET_HEADERS.has(name)) kept[name] = value;
  }
  const sent = sentContentTypes.get(request);
  if (sent !== undefined) kept['content-type'] = sent;
  return { ...kept, caller: request.caller };
}

export function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
