// The whole per-message path, in order: parse → check identity → read S/4HANA → one transaction → outcome.
// It returns what should happen to the message; only the transport adapters (AMQP, webhook) act on it.

import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { classify, failureReason } from '../errors.js';
import { toPortalOrder } from '../portal/portalStatus.js';
import { type RetryPolicy, retry } from '../retry.js';
import type { ReadOrder } from '../s4/batchedReads.js';
import { applyEffect, type EffectMail } from './applyEffect.js';
import { type InboundMessage, type ParsedEvent, parseCloudEvent } from './cloudEvent.js';
import {
  checkInbox,
  forgetAttempts,
  noteAttemptError,
  type ProcessedOutcome,
  recordProcessed,
} from './inbox.js';
import { isLegacyHash, samePayload } from './payloadHash.js';

export type Outcome =
  /** Done with, for good: settle as accepted. */
  | { kind: 'accept'; result: ProcessedOutcome | 'duplicate' }
  /** Could not be done now: hand it back for redelivery. */
  | { kind: 'release'; code: 'transient_failure'; reason: string }
  /** Can never be done: dead-letter it with the reason. */
  | { kind: 'reject'; code: RejectCode; reason: string };

export type RejectCode = 'invalid_event' | 'conflict' | 'delivery_limit' | 'permanent_failure';

export interface EventHandlerDeps {
  pool: Pool;
  readOrder: ReadOrder;
  retryPolicy: RetryPolicy;
  maxDeliveries: number;
  maxMessageBytes: number;
  mail: EffectMail;
  /** Called after a commit that queued an email, so the sender need not wait for its next poll. */
  onMailQueued: () => void;
  /** Sees every handled message with its channel and duration: metrics. Must not throw. */
  observe?: (channel: Channel, handled: Handled, seconds: number) => void;
  logger: Logger;
}

export interface Handled {
  outcome: Outcome;
  /** The event, once it parsed: for logs and metrics. */
  event: ParsedEvent | undefined;
}

/** Where a message came from: a transport, or an operator replaying a dead letter. */
export type Channel = 'amqp' | 'webhook' | 'replay';

export interface HandleContext {
  channel: Channel;
  /** Aborted at shutdown: retry waits end at once and the message is released. */
  signal?: AbortSignal;
}

/** One handler serves every channel, so deliveries of one identity overlap nowhere in the instance. */
export type HandleEvent = (message: InboundMessage, context: HandleContext) => Promise<Handled>;

export function createEventHandler(deps: EventHandlerDeps): HandleEvent {
  const { pool, readOrder, logger } = deps;

  /** One try at the effect; throws on failure. */
  async function apply(event: ParsedEvent, signal: AbortSignal | undefined): Promise<Outcome> {
    if (event.salesOrder === undefined) {
      // One statement: atomic on its own, no transaction needed.
      return accept((await recordProcessed(pool, event, 'ignored')) ? 'ignored' : 'duplicate');
    }
    // Never trust the event's data beyond the key: the order's current state comes from S/4HANA, read
    // before the transaction opens.
    const { order, readAt } = await readOrder(event.salesOrder, signal);
    if (order === null) {
      return accept((await recordProcessed(pool, event, 'not_found')) ? 'not_found' : 'duplicate');
    }
    const { result, mailQueued } = await applyEffect(pool, event, toPortalOrder(order, readAt), deps.mail);
    if (mailQueued) deps.onMailQueued();
    return accept(result);
  }

  // Deliveries of one identity that overlap in this instance run one after the other, so a duplicate that
  // arrives while its original is still in flight finds it processed instead of asking S/4HANA again.
  const inFlight = new Map<string, Promise<unknown>>();

  async function decide(message: InboundMessage, signal: AbortSignal | undefined): Promise<Handled> {
    const parsed = parseCloudEvent(message, deps.maxMessageBytes);
    if (!parsed.ok) return { outcome: reject('invalid_event', parsed.reason), event: undefined };
    const { event } = parsed;
    const key = JSON.stringify([event.source, event.id]);
    const previous = inFlight.get(key);
    const current = (previous ?? Promise.resolve()).then(() => decideParsed(event, signal));
    const tail = current.catch(() => {});
    inFlight.set(key, tail);
    void tail.then(() => {
      if (inFlight.get(key) === tail) inFlight.delete(key);
    });
    return current;
  }

  async function decideParsed(event: ParsedEvent, signal: AbortSignal | undefined): Promise<Handled> {
    try {
      // The first database call of a delivery: a blip here is retried like one in apply().
      const inbox = await retry(() => checkInbox(pool, event), deps.retryPolicy, signal);
      if (inbox.processedHash !== null) {
        if (samePayload(inbox.processedHash, event)) return { outcome: accept('duplicate'), event };
        return { outcome: reject('conflict', conflictReason(inbox.processedHash)), event };
      }
      if (inbox.attempts > deps.maxDeliveries) {
        const reason = `delivery limit reached: ${inbox.attempts - 1} deliveries did not complete (last error: ${inbox.lastError ?? 'none recorded; the process may have died while handling it'})`;
        await forgetAttempts(pool, event);
        return { outcome: reject('delivery_limit', reason), event };
      }
      return { outcome: await retry(() => apply(event, signal), deps.retryPolicy, signal), event };
    } catch (err) {
      const reason = failureReason(err);
      if (classify(err) === 'permanent') return { outcome: reject('permanent_failure', reason), event };
      await noteAttemptError(pool, event, reason).catch(() => {
        // The database may be what failed; the delivery count is already recorded, the error text is a courtesy.
      });
      return { outcome: { kind: 'release', code: 'transient_failure', reason }, event };
    }
  }

  return async function handleEvent(message, { channel, signal }) {
    const started = process.hrtime.bigint();
    const handled = await decide(message, signal);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { outcome, event } = handled;
    const log = logger.child(
      event
        ? { channel, source: event.source, id: event.id, type: event.type, salesOrder: event.salesOrder }
        : { channel },
    );
    if (outcome.kind === 'reject') log.error({ reason: outcome.reason }, 'event rejected');
    else if (outcome.kind === 'release')
      log.warn({ reason: outcome.reason }, 'event released for redelivery');
    else if (outcome.result === 'duplicate') log.debug('duplicate event skipped');
    else log.info({ result: outcome.result, ms: Math.round(seconds * 1000) }, 'event processed');
    deps.observe?.(channel, handled, seconds);
    return handled;
  };
}

function conflictReason(recordedHash: string): string {
  const reason = 'conflict: this source and id were processed with a different payload';
  // Recorded before the hash covered meaning only: a copy whose attributes were rewritten cannot be told apart.
  return isLegacyHash(recordedHash)
    ? `${reason} (recorded by an earlier version, compared as written)`
    : reason;
}

function accept(result: ProcessedOutcome | 'duplicate'): Outcome {
  return { kind: 'accept', result };
}

function reject(code: RejectCode, reason: string): Outcome {
  return { kind: 'reject', code, reason };
}
