// Refusing a message, decided once for every transport. The dead letter is stored and the event's delivery
// count cleared in one transaction: the budget starts afresh only once the reason is durable, so a message that
// kills the process on every try cannot win a new budget by failing between the two. A message refused before
// (its letter stored by an earlier delivery, perhaps on another instance at the same moment) writes nothing and
// is taken, so that a broker that sends rejected messages again forgets it. Each adapter only translates the
// answer: AMQP settles `rejected`, `accepted` or `released`, the webhook answers 202 or 503.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { withTransaction } from '../db/transaction.js';
import { classify } from '../errors.js';
import { type DeadLetter, recordDeadLetter } from './deadLetter.js';
import { clearAttempts } from './inbox.js';

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

export type Refuse = (letter: DeadLetter, log: Logger) => Promise<Refusal>;

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
