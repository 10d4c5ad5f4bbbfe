// What a push sender is told about each event: accept → processed or duplicate (200, after commit);
// release → retry-later (503 with Retry-After, so the sender redelivers); reject → refused (src/events/refuse.ts:
// kept in dead_letter with its reason) and dead-lettered (202, so the sender stops retrying), or retry-later
// while the dead letter cannot be stored; a message refused before, arriving again: already-refused (202).
// Anything that goes wrong before the outcome is safely stored is a retry-later: nothing is lost.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { InboundMessage } from '../events/cloudEvent.js';
import type { HandleEvent } from '../events/handleEvent.js';
import type { Refuse } from '../events/refuse.js';
import { header, storedHeaders } from './pushHeaders.js';

export type PushChannel = 'webhook' | 'event-hub';

/** What became of one event of a delivery. */
export type EventAnswer =
  | { status: 'processed'; result: string }
  | { status: 'duplicate' }
  /** deadLetterId is null for a letter the database refuses for its content: its reason is in the error log. */
  | { status: 'dead-lettered'; reason: string; deadLetterId: string | null }
  /** Refused by an earlier delivery, whose dead letter stands: nothing stored again. */
  | { status: 'already-refused' }
  | { status: 'retry-later' };

/** One push request on its way through: where it came from, its log, and the scope's close signal. */
export interface Push {
  handle: HandleEvent;
  refuse: Refuse;
  channel: PushChannel;
  request: FastifyRequest;
  log: Logger;
  signal: AbortSignal;
}

// The handler already retried S/4HANA and the database within the request; the sender's own redelivery
// should come a little later, not at once.
const RETRY_AFTER_SECONDS = 5;

/** One event through the handler, its outcome stored where it must be: what to tell the sender about it. */
export async function answerEvent(push: Push, message: InboundMessage): Promise<EventAnswer> {
  try {
    const handled = await push.handle(message, { channel: push.channel, signal: push.signal });
    const { outcome } = handled;
    if (outcome.kind === 'accept') {
      const { result } = outcome;
      if (result === 'already_refused') return { status: 'already-refused' };
      return result === 'duplicate' ? { status: result } : { status: 'processed', result };
    }
    if (outcome.kind === 'release') return { status: 'retry-later' };
    const eventLog = handled.log.child({
      address: header(push.request, 'x-address'),
      caller: push.request.caller,
    });
    return await deadLetter({ ...push, log: eventLog }, message, outcome.reason, handled.event);
  } catch (err) {
    // The final fallback: nothing is committed that the sender does not know of, so it may simply resend.
    push.log.error({ err }, 'push delivery failed unexpectedly; asking the sender to retry');
    return { status: 'retry-later' };
  }
}

/** A message refused for good, kept as a dead letter: dead-lettered once stored, retry-later until then. */
export async function deadLetter(
  push: Push,
  message: InboundMessage,
  reason: string,
  event: { source: string; id: string; payloadHash: string; salesOrder?: string | undefined } | undefined,
): Promise<EventAnswer> {
  const refusal = await push.refuse(
    {
      channel: push.channel,
      reason,
      source: event?.source,
      eventId: event?.id,
      payloadHash: event?.payloadHash,
      salesOrder: event?.salesOrder,
      contentType: message.contentType,
      attributes: message.binaryAttributes,
      headers: storedHeaders(push.request),
      body: message.body,
    },
    push.log,
  );
  // Not stored for now, so not answered as taken: the sender keeps the message and tries again.
  if (refusal.kind === 'retry_later') return { status: 'retry-later' };
  if (refusal.kind === 'already_refused') return { status: 'already-refused' };
  return { status: 'dead-lettered', reason, deadLetterId: refusal.deadLetterId };
}

export function retryLater(reply: FastifyReply, answer: object): FastifyReply {
  return reply
    .code(503)
    .header('retry-after', String(RETRY_AFTER_SECONDS))
    .send({ ...answer, retryAfterSeconds: RETRY_AFTER_SECONDS });
}
