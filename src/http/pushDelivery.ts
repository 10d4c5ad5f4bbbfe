// How an HTTP push becomes outcomes and answers, for every push endpoint (Event Mesh's webhook, Event Hub). Each
// event goes through the same handleEvent as an AMQP message; only the answer differs (pushAnswer.ts).
// Contracts: CloudEvents HTTP protocol binding 1.0: binary, structured and batch mode.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { BATCH_ELEMENT_CONTENT_TYPE, BATCH_MEDIA_TYPE, splitBatch } from '../events/cloudEventBatch.js';
import { mediaType } from '../events/contentType.js';
import type { HandleEvent } from '../events/outcome.js';
import type { InboundMessage } from '../events/parsedEvent.js';
import { answerEvent, type Push, type PushChannel, retryLater } from './pushAnswer.js';
import { binaryAttributes, header, holdContentType, sentContentType } from './pushHeaders.js';

export interface PushDeps {
  /** Decides each event and stores what it refuses; this edge only translates the outcome. */
  handle: HandleEvent;
  /** A batch larger than this is refused as a whole (413); a single event this large is dead-lettered. */
  maxMessageBytes: number;
  logger: Logger;
}

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
    scope.addHook('onRequest', async (request) => holdContentType(request));
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
  const contentType = sentContentType(request);
  const push: Push = { handle: deps.handle, channel, request, log, signal };
  if (mediaType(contentType) === BATCH_MEDIA_TYPE) {
    return deliverBatch(push, deps.maxMessageBytes, reply, body, contentType);
  }

  const decoded = binaryAttributes(request);
  // Headers that cannot be decoded make the message unreadable for good, like a body that is not JSON.
  const message: InboundMessage = decoded.ok
    ? { body, contentType, binaryAttributes: decoded.attributes }
    : { body, contentType, binaryAttributes: {}, unreadable: decoded.reason };
  const answer = await answerEvent(push, message);
  if (answer.status === 'retry-later') return retryLater(reply, answer);
  const refused = answer.status === 'dead-lettered' || answer.status === 'already-refused';
  return reply.code(refused ? 202 : 200).send(answer);
}

/**
 * Batch mode: every event on its own through the same path, side by side (deliveries of one identity still run
 * one after the other in the handler). 200 only when every event is settled (committed, duplicate or
 * dead-lettered); otherwise 503, and the sender resends the batch, whose settled events are then duplicates.
 */
async function deliverBatch(
  push: Push,
  maxMessageBytes: number,
  reply: FastifyReply,
  body: Buffer,
  contentType: string | undefined,
): Promise<FastifyReply> {
  if (body.length > maxMessageBytes) {
    return reply.code(413).send({
      error: 'payload too large',
      message: `batch of ${body.length} bytes exceeds the limit of ${maxMessageBytes} bytes; send smaller batches`,
    });
  }
  const split = splitBatch(body);
  if (!split.ok) {
    // Nothing in it can be read as an event: refused whole by the handler, like any unreadable message.
    const answer = await answerEvent(push, {
      body,
      contentType,
      binaryAttributes: {},
      unreadable: split.reason,
    });
    if (answer.status === 'retry-later') return retryLater(reply, answer);
    return reply.code(202).send(answer);
  }
  const events = await Promise.all(
    split.events.map((event) =>
      answerEvent(push, { body: event, contentType: BATCH_ELEMENT_CONTENT_TYPE, binaryAttributes: {} }),
    ),
  );
  if (events.some((event) => event.status === 'retry-later')) {
    return retryLater(reply, { status: 'retry-later', events });
  }
  return reply.code(200).send({ status: 'settled', events });
}
