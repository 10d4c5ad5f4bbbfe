// The webhook edge: SAP Event Mesh pushes a queue's messages here instead of the service pulling them over
// AMQP. Each delivery goes through the same handleEvent as an AMQP message; only the answer differs:
// accept → 200 (after commit, or for a duplicate); release → 503 with Retry-After, so the sender redelivers;
// reject → the message is kept in dead_letter with its reason and answered 202, so the sender stops retrying.
// Anything that goes wrong before the outcome is safely stored is a 503: nothing is lost.
// Contracts: CloudEvents HTTP protocol binding 1.0 (binary and structured mode) and HTTP webhook 1.0
// (the OPTIONS handshake).
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { InboundMessage } from '../events/cloudEvent.js';
import { recordDeadLetter } from '../events/deadLetter.js';
import type { HandleEvent } from '../events/handleEvent.js';
import type { Auth } from './auth.js';
import { SCOPES } from './scopes.js';

export interface WebhookDeps {
  handle: HandleEvent;
  pool: Pool;
  auth: Auth;
  logger?: Logger;
}

// The handler already retried S/4HANA and the database within the request; the sender's own redelivery
// should come a little later, not at once.
const RETRY_AFTER_SECONDS = 5;
// Never stored with a dead letter: credentials.
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
const CE_HEADER = /^ce-(.+)$/;

export function webhookRoutes(deps: WebhookDeps): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    // A scope of its own, so that the raw-body parsers below apply to the webhook only.
    await app.register(async (scope) => {
      // The body reaches the parser exactly as received, within the app's bodyLimit: whether it is a valid
      // event is the parser's decision, as for AMQP, not the HTTP framework's.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

      // Aborting ends the handler's retry waits, so deliveries in flight at shutdown answer 503 quickly.
      const stopping = new AbortController();
      scope.addHook('preClose', async () => stopping.abort());

      // The handshake is answered without a token on purpose: it only states consent to receive (CloudEvents
      // webhook spec 4: it "does not aim to establish an authentication or authorization context"), reveals
      // nothing and changes nothing, and whether Event Mesh sends the subscription's token with it is not
      // documented. Every delivery (POST) still needs the EventSubmit scope.
      scope.options('/events', async (request, reply) => {
        const origin = request.headers['webhook-request-origin'];
        reply.header('allow', 'OPTIONS, POST');
        if (typeof origin === 'string' && origin !== '') {
          reply.header('webhook-allowed-origin', origin).header('webhook-allowed-rate', '*');
        }
        return reply.code(200).send();
      });

      // The token is checked on request, before the body (up to 2 MiB) is read, as the admin API does.
      scope.post(
        '/events',
        { onRequest: deps.auth.requireScope(SCOPES.eventSubmit) },
        async (request, reply) => deliver(deps, request, reply, stopping.signal),
      );
    });
  };
}

async function deliver(
  deps: WebhookDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  signal: AbortSignal,
): Promise<FastifyReply> {
  const address = header(request, 'x-address');
  const log = (deps.logger ?? request.log).child({ channel: 'webhook', address, caller: request.caller });
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const contentType = header(request, 'content-type');
  const decoded = binaryAttributes(request);
  const message: InboundMessage = {
    body,
    contentType,
    binaryAttributes: decoded.ok ? decoded.attributes : {},
  };
  try {
    // Headers that cannot be decoded make the message unreadable for good, like a body that is not JSON.
    if (!decoded.ok) return await deadLetter(deps, log, request, reply, message, decoded.reason, undefined);
    const { outcome, event } = await deps.handle(message, { channel: 'webhook', signal });
    if (outcome.kind === 'accept') {
      const { result } = outcome;
      return reply
        .code(200)
        .send(result === 'duplicate' ? { status: result } : { status: 'processed', result });
    }
    if (outcome.kind === 'release') return retryLater(reply);
    return await deadLetter(deps, log, request, reply, message, outcome.reason, event);
  } catch (err) {
    // The final fallback: nothing is committed that the sender does not know of, so it may simply resend.
    log.error({ err }, 'webhook delivery failed unexpectedly; asking the sender to retry');
    return retryLater(reply);
  }
}

async function deadLetter(
  deps: WebhookDeps,
  log: Logger | FastifyBaseLogger,
  request: FastifyRequest,
  reply: FastifyReply,
  message: InboundMessage,
  reason: string,
  event: { source: string; id: string } | undefined,
): Promise<FastifyReply> {
  let deadLetterId: string;
  try {
    deadLetterId = await recordDeadLetter(deps.pool, {
      channel: 'webhook',
      reason,
      source: event?.source,
      eventId: event?.id,
      contentType: message.contentType,
      attributes: message.binaryAttributes,
      headers: storedHeaders(request),
      body: message.body,
    });
  } catch (err) {
    // Not stored, so not answered as taken: the sender keeps the message and tries again.
    log.error({ err, reason }, 'could not store the dead letter; asking the sender to retry');
    return retryLater(reply);
  }
  return reply.code(202).send({ status: 'dead-lettered', reason, deadLetterId });
}

function retryLater(reply: FastifyReply): FastifyReply {
  return reply
    .code(503)
    .header('retry-after', String(RETRY_AFTER_SECONDS))
    .send({ status: 'retry-later', retryAfterSeconds: RETRY_AFTER_SECONDS });
}

type Decoded = { ok: true; attributes: Record<string, unknown> } | { ok: false; reason: string };

/**
 * The `ce-*` headers (HTTP binding 3.1.3), named without the prefix (Node gives header names in lower case),
 * each value percent-decoded once. Whether they make a binary-mode event or are the optional copies beside a
 * structured one (3.2.3) is the parser's decision, by the content type, as for AMQP.
 */
function binaryAttributes(request: FastifyRequest): Decoded {
  const attributes: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    const attribute = CE_HEADER.exec(name)?.[1];
    if (attribute === undefined || value === undefined) continue;
    const raw = Array.isArray(value) ? value.join(',') : value;
    const text = decodeHeaderValue(raw);
    if (text === undefined) return { ok: false, reason: `header ${name} is not valid percent-encoded UTF-8` };
    attributes[attribute] = text;
  }
  return { ok: true, attributes };
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
  return { ...kept, caller: request.caller };
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
