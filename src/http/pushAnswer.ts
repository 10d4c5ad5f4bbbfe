// What a push sender is told about each event: accept → processed or duplicate (200, after commit);
// release → retry-later (503 with Retry-After, so the sender redelivers), also while a dead letter cannot be
// stored; reject → dead-lettered (202, so the sender stops retrying), its letter stored by the handler; a
// message refused before, arriving again: already-refused (202).
// Anything that goes wrong before the outcome is safely stored is a retry-later: nothing is lost.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { HandleEvent } from '../events/outcome.js';
import type { InboundMessage } from '../events/parsedEvent.js';
import { storedHeaders } from './pushHeaders.js';

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
    const { outcome, deadLetterId } = await push.handle(message, {
      channel: push.channel,
      signal: push.signal,
      headers: storedHeaders(push.request),
      log: push.log,
    });
    if (outcome.kind === 'accept') {
      const { result } = outcome;
      if (result === 'already_refused') return { status: 'already-refused' };
      return result === 'duplicate' ? { status: result } : { status: 'processed', result };
    }
    if (outcome.kind === 'release') return { status: 'retry-later' };
    return { status: 'dead-lettered', reason: outcome.reason, deadLetterId: deadLetterId ?? null };
  } catch (err) {
    // The final fallback: nothing is committed that the sender does not know of, so it may simply resend.
    push.log.error({ err }, 'push delivery failed unexpectedly; asking the sender to retry');
    return { status: 'retry-later' };
  }
}

export function retryLater(reply: FastifyReply, answer: object): FastifyReply {
  return reply
    .code(503)
    .header('retry-after', String(RETRY_AFTER_SECONDS))
    .send({ ...answer, retryAfterSeconds: RETRY_AFTER_SECONDS });
}
