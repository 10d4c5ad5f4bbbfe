// Refusing a message, decided once for every transport. The dead letter is stored and the event's delivery
// count cleared in one transaction: the budget starts afresh only once the reason is durable, so a message that
// kills the process on every try cannot win a new budget by failing between the two. A message refused before
// (its letter stored by an earlier delivery, perhaps on another instance at the same moment) writes nothing and
// is taken, so that a broker that sends rejected messages again forgets it. The handler refuses, so that the
// outcome it counts and logs is the final one; each adapter only translates that outcome.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { withTransaction } from '../db/transaction.js';
import { classify } from '../errors.js';
import { type DeadLetter, findRefusedMessage, recordDeadLetter } from './deadLetter.js';
import type { EventKeys } from './family.js';
import { clearAttempts } from './inbox.js';
import { messageHash } from './messageHash.js';
import { accept, type Channel, type HandleContext, type Handled, type Outcome, reject } from './outcome.js';
import { identityFields } from './outcomeReport.js';
import type { InboundMessage, ParsedEvent } from './parsedEvent.js';

export type Refusal =
  /**
   * Refused for good: stored with its reason, or (deadLetterId null) not storable at all, such as a letter the
   * database refuses for its content. Then the reason is in the error log only, and the message is refused all
   * the same rather than coming back forever.
   */
  | { kind: 'refused'; deadLetterId: string | null }
  /** Refused by an earlier delivery, whose dead letter stands: taken, so that the broker forgets it. */
  | { kind: 'already_refused'; deadLetterId: string | null }
  /** The database cannot take it now: the message goes back to its sender, its delivery count kept. */
  | { kind: 'retry_later' };

export async function refuse(pool: Pool, letter: DeadLetter, log: Logger): Promise<Refusal> {
  try {
    return await withTransaction(pool, async (tx): Promise<Refusal> => {
      const stored = await recordDeadLetter(tx, letter);
      if (stored.earlier) return { kind: 'already_refused', deadLetterId: stored.id };
      if (letter.source !== undefined && letter.eventId !== undefined) {
        await clearAttempts(tx, { source: letter.source, id: letter.eventId });
      }
      return { kind: 'refused', deadLetterId: stored.id };
    });
  } catch (err) {
    if (classify(err) === 'transient') {
      log.warn({ err, reason: letter.reason }, 'dead letter not stored for now; the message goes back');
      return { kind: 'retry_later' };
    }
    log.error({ err, reason: letter.reason }, 'dead letter cannot be stored; refusing it with this log line');
    return { kind: 'refused', deadLetterId: null };
  }
}

/**
 * A reject made final: stored as a dead letter and rejected; taken as `already_refused` when an earlier delivery
 * stored it; released while the letter cannot be stored. A replay writes no new letter: the stored one stands.
 */
export async function refuseRejected(
  pool: Pool,
  message: InboundMessage,
  { channel, headers, log, families }: HandleContext & { log: Logger; families: readonly EventKeys[] },
  outcome: Outcome & { kind: 'reject' },
  event: ParsedEvent | undefined,
): Promise<Handled> {
  // A replay's letter stands already; reconciliation never takes a message (reconcileRead.ts fails its run).
  if (channel === 'replay' || channel === 'reconcile') return { outcome, event };
  const refusal = await refuse(
    pool,
    {
      channel,
      reason: outcome.reason,
      source: event?.source,
      eventId: event?.id,
      payloadHash: event?.payloadHash,
      family: event?.family,
      key: event?.key,
      contentType: message.contentType,
      attributes: message.binaryAttributes,
      headers: headers ?? {},
      body: message.body,
    },
    log.child(identityFields(event, families)),
  );
  if (refusal.kind === 'refused') return { outcome, event, deadLetterId: refusal.deadLetterId };
  if (refusal.kind === 'already_refused') return { outcome: accept('already_refused'), event };
  const reason = `dead letter not stored for now (${outcome.reason})`;
  return { outcome: { kind: 'release', code: 'transient_failure', reason }, event };
}

/**
 * Decides what becomes of a message that is no event, storing nothing (refuseRejected stores): a reject, unless
 * the same message was refused before and its dead letter stands: then it is taken, so that a broker which sends
 * rejected messages again forgets it. A replay is an operator's decision to try again, never recognised. Should
 * the lookup fail, the refusal recognises it as it stores.
 */
export async function outcomeOfInvalid(
  pool: Pool,
  message: InboundMessage,
  channel: Channel,
  reason: string,
): Promise<Outcome> {
  if (channel !== 'replay') {
    const hash = messageHash({ ...message, channel, attributes: message.binaryAttributes });
    const earlier = await findRefusedMessage(pool, hash).catch(() => null);
    if (earlier !== null) return accept('already_refused');
  }
  return reject('invalid_event', reason);
}
