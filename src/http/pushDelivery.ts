// How an HTTP push becomes outcomes and answers, for every push endpoint (Event Mesh's webhook, Event Hub). Each
// event goes through the same handleEvent as an AMQP message; only the answer differs:
// accept → 200 (after commit, or for a duplicate); release → 503 with Retry-After, so the sender redelivers;
// reject → refused (src/events/refuse.ts: kept in dead_letter with its reason) and answered 202, so the sender
// stops retrying, or 503 while the dead letter cannot be stored. Anything that goes wrong before the outcome is
// safely stored is a 503: nothing is lost.
// Contracts: CloudEvents HTTP protocol binding 1.0: binary, structured and batch mode.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { collectAttributes } from '../events/binaryAttributes.js';
import type { InboundMessage } from '../events/cloudEvent.js';
import { BATCH_ELEMENT_CONTENT_TYPE, BATCH_MEDIA_TYPE, splitBatch } from '../events/cloudEventBatch.js';
import type { HandleEvent } from '../events/handleEvent.js';
import type { Refuse } from '../events/refuse.js';

export type PushChannel = 'webhook' | 'event-hub';

export interface PushDeps {
  handle: HandleEvent;
  /** Stores a refused message (src/events/refuse.ts); this edge only translates the answer. */
  refuse: Refuse;
  /** A batch larger than this is refused as a whole (413); a single event this large is dead-lettered. */
  maxMessageBytes: number;
  logger: Logger;
}

/** What became of one event of a delivery. */
export type EventAnswer =
  | { status: 'processed'; result: string }
  | { status: 'duplicate' }
  /** deadLetterId is null for a letter the database refuses for its content: its reason is in the error log. */
  | { status: 'dead-lettered'; reason: string; deadLetterId: string | null }
  | { status: 'retry-later' };

// The handler already retried S/4HANA and the database within the request; the sender's own redelivery
// should come a little later, not at once.
const RETRY_AFTER_SECONDS = 5;
// Never stored with a dead letter: credentials.
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
const CE_HEADER = /^ce-(.+)$/;
// The Content-Type as sent. fastify answers a header it cannot parse with its own 415 before any body parser
// runs, with no reason stored; so the push scope hands fastify a neutral type and keeps the sent one here, and
// the event parser decides about it, as for every other unreadable content type.
const sentContentTypes = new WeakMap<FastifyRequest, string | undefined>();

/**
 * Registers push routes in a scope of their own, whose bodies reach the event parser exactly as received (within
 * the app's bodyLimit): whether a body is an event is the parser's decision, as for AMQP, not the framework's.
 * `signal` aborts at close, which ends the handler's retry waits, so deliveries in flight answer 503 quickly.
 */
export async function pushScope(
  app: FastifyInstance,
  routes: (scope: FastifyInstance, signal: AbortSignal) => void,
): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.addHook('onRequest', async (request) => {
      const sent = request.headers['content-type'];
      sentContentTypes.set(request, sent);
      if (sent !== undefined) request.headers['content-type'] = 'application/octet-stream';
    });
    const stopping = new AbortController();
    scope.addHook('preClose', async () => stopping.abort());
    routes(scope, stopping.signal);
  });
}

export async function deliver(
  deps: PushDeps,
  channel: PushChannel,
  request: FastifyRequest,
  reply: FastifyReply,
  signal: AbortSignal,
): Promise<FastifyReply> {
  const address = header(request, 'x-address');
  const log = deps.logger.child({ channel, address, caller: request.caller });
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const contentType = sentContentTypes.get(request);
  const push: Push = { deps, channel, request, log, signal };
  if (mediaType(contentType) === BATCH_MEDIA_TYPE) return deliverBatch(push, reply, body, contentType);

  const decoded = binaryAttributes(request);
  const message: InboundMessage = {
    body,
    contentType,
    binaryAttributes: decoded.ok ? decoded.attributes : {},
  };
  // Headers that cannot be decoded make the message unreadable for good, like a body that is not JSON.
  const answer = decoded.ok
    ? await settle(push, message)
    : await deadLetter(push, message, decoded.reason, undefined);
  if (answer.status === 'retry-later') return retryLater(reply, answer);
  return reply.code(answer.status === 'dead-lettered' ? 202 : 200).send(answer);
}

interface Push {
  deps: PushDeps;
  channel: PushChannel;
  request: FastifyRequest;
  log: Logger;
  signal: AbortSignal;
}

/**
 * Batch mode: every event on its own through the same path, side by side (deliveries of one identity still run
 * one after the other in the handler). 200 only when every event is settled (committed, duplicate or
 * dead-lettered); otherwise 503, and the sender resends the batch, whose settled events are then duplicates.
 */
async function deliverBatch(
  push: Push,
  reply: FastifyReply,
  body: Buffer,
  contentType: string | undefined,
): Promise<FastifyReply> {
  const { maxMessageBytes } = push.deps;
  if (body.length > maxMessageBytes) {
    return reply.code(413).send({
      error: 'payload too large',
      message: `batch of ${body.length} bytes exceeds the limit of ${maxMessageBytes} bytes; send smaller batches`,
    });
  }
  const split = splitBatch(body);
  if (!split.ok) {
    // Nothing in it can be read as an event: kept whole, like any unreadable message.
    const answer = await deadLetter(
      push,
      { body, contentType, binaryAttributes: {} },
      split.reason,
      undefined,
    );
    if (answer.status === 'retry-later') return retryLater(reply, answer);
    return reply.code(202).send(answer);
  }
  const events = await Promise.all(
    split.events.map((event) =>
      settle(push, { body: event, contentType: BATCH_ELEMENT_CONTENT_TYPE, binaryAttributes: {} }),
    ),
  );
  if (events.some((event) => event.status === 'retry-later')) {
    return retryLater(reply, { status: 'retry-later', events });
  }
  return reply.code(200).send({ status: 'settled', events });
}

/** One event through the handler, its outcome stored where it must be: what to tell the sender about it. */
async function settle(push: Push, message: InboundMessage): Promise<EventAnswer> {
  try {
    const { outcome, event, log } = await push.deps.handle(message, {
      channel: push.channel,
      signal: push.signal,
    });
    if (outcome.kind === 'accept') {
      const { result } = outcome;
      return result === 'duplicate' ? { status: result } : { status: 'processed', result };
    }
    if (outcome.kind === 'release') return { status: 'retry-later' };
    const eventLog = log.child({ address: header(push.request, 'x-address'), caller: push.request.caller });
    return await deadLetter({ ...push, log: eventLog }, message, outcome.reason, event);
  } catch (err) {
    // The final fallback: nothing is committed that the sender does not know of, so it may simply resend.
    push.log.error({ err }, 'push delivery failed unexpectedly; asking the sender to retry');
    return { status: 'retry-later' };
  }
}

async function deadLetter(
  push: Push,
  message: InboundMessage,
  reason: string,
  event: { source: string; id: string } | undefined,
): Promise<EventAnswer> {
  const refusal = await push.deps.refuse(
    {
      channel: push.channel,
      reason,
      source: event?.source,
      eventId: event?.id,
      contentType: message.contentType,
      attributes: message.binaryAttributes,
      headers: storedHeaders(push.request),
      body: message.body,
    },
    push.log,
  );
  // Not stored for now, so not answered as taken: the sender keeps the message and tries again.
  if (refusal.kind === 'retry_later') return { status: 'retry-later' };
  return { status: 'dead-lettered', reason, deadLetterId: refusal.deadLetterId };
}

function retryLater(reply: FastifyReply, answer: object): FastifyReply {
  return reply
    .code(503)
    .header('retry-after', String(RETRY_AFTER_SECONDS))
    .send({ ...answer, retryAfterSeconds: RETRY_AFTER_SECONDS });
}

type Decoded = { ok: true; attributes: Record<string, unknown> } | { ok: false; reason: string };

/**
 * The `ce-*` headers (HTTP binding 3.1.3), named without the prefix (Node gives header names in lower case),
 * each value percent-decoded once. Whether they make a binary-mode event or are the optional copies beside a
 * structured one (3.2.3) is the parser's decision, by the content type, as for AMQP.
 */
function binaryAttributes(request: FastifyRequest): Decoded {
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
function storedHeaders(request: FastifyRequest): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!SECRET_HEADERS.has(name)) kept[name] = value;
  }
  const sent = sentContentTypes.get(request);
  if (sent !== undefined) kept['content-type'] = sent;
  return { ...kept, caller: request.caller };
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}
