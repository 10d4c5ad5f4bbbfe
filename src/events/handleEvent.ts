// The whole per-message path, in the README's numbered steps: parse → check identity → read S/4HANA → one
// transaction → outcome. It returns what should happen to the message; only the transport adapters (AMQP,
// webhook) act on it. Read top-down: the handler first, each step below the one that calls it.

import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { classify, failureReason } from '../errors.js';
import { type PortalOrder, toPortalOrder } from '../portal/portalStatus.js';
import { type RetryPolicy, retry } from '../retry.js';
import type { ReadOrder } from '../s4/batchedReads.js';
import { type Context, inSpan, producerContext, SpanKind } from '../telemetry/tracing.js';
import type { EffectResult } from './applyEffect.js';
import { type InboundMessage, type ParsedEvent, parseCloudEvent } from './cloudEvent.js';
import { findRefusedMessage } from './deadLetter.js';
import { batchInboxChecks, type InboxEntry, noteAttemptError, recordProcessed } from './inbox.js';
import { messageHash } from './messageHash.js';
import { accept, type Channel, type Outcome, reject } from './outcome.js';
import { eventAttributes, logOutcome, outcomeAttributes } from './outcomeReport.js';
import { isLegacyHash, samePayload } from './payloadHash.js';
import { keyedSerializer } from './serializeByKey.js';

export interface EventHandlerDeps {
  pool: Pool;
  readOrder: ReadOrder;
  /** The one transaction of step 5, bound in the composition root to what the outbox needs (recipients…). */
  writeEffect: WriteEffect;
  retryPolicy: RetryPolicy;
  maxDeliveries: number;
  maxMessageBytes: number;
  /** Called after a commit that queued an email, so the sender need not wait for its next poll. */
  onMailQueued: () => void;
  /** Sees every handled message with its channel and duration: metrics. Must not throw. */
  observe?: (channel: Channel, handled: Handled, seconds: number) => void;
  logger: Logger;
}

/** `trace`: the transaction's span, for the outbox rows to link back to. */
export type WriteEffect = (event: ParsedEvent, order: PortalOrder, trace: Context) => Promise<EffectResult>;

export interface Handled {
  outcome: Outcome;
  /** The event, once it parsed: for logs and metrics. */
  event: ParsedEvent | undefined;
  /** The event's logger (channel, source, id, type, sales order), for whatever the adapter logs about it. */
  readonly log: Logger;
}

export interface HandleContext {
  channel: Channel;
  /** Aborted at shutdown: retry waits end at once and the message is released. */
  signal?: AbortSignal;
}

/** One handler serves every channel, so deliveries of one identity overlap nowhere in the instance. */
export type HandleEvent = (message: InboundMessage, context: HandleContext) => Promise<Handled>;

export function createEventHandler(deps: EventHandlerDeps): HandleEvent {
  // Deliveries of one identity that overlap in this instance run one after the other, so a duplicate that
  // arrives while its original is still in flight finds it processed instead of asking S/4HANA again.
  const oneAtATime = keyedSerializer();
  const checkInbox = batchInboxChecks(deps.pool);

  return async function handleEvent(message, { channel, signal }) {
    const started = process.hrtime.bigint();
    // 1–2. Received by the adapter; parse.
    const parsed = parseCloudEvent(message, deps.maxMessageBytes);
    const event = parsed.ok ? parsed.event : undefined;
    const fields = event
      ? { channel, source: event.source, id: event.id, type: event.type, salesOrder: event.salesOrder }
      : { channel };
    // One span per delivery, continuing the producer's trace when the event carries the tracing extension.
    return inSpan(
      'process sales-order event',
      { kind: SpanKind.CONSUMER },
      producerContext(event?.traceparent, event?.tracestate),
      async (span, trace) => {
        // Built only for a recorded span: with tracing off nothing is allocated per message.
        const recording = span.isRecording();
        if (recording) span.setAttributes(eventAttributes(channel, event));
        const outcome = parsed.ok
          ? await oneAtATime.run(JSON.stringify([parsed.event.source, parsed.event.id]), () =>
              checkIdentityThenApply(deps, checkInbox, parsed.event, trace, channel, signal),
            )
          : await refuseInvalid(deps.pool, message, channel, parsed.reason);
        if (recording) span.setAttributes(outcomeAttributes(outcome));
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        logOutcome(deps.logger, fields, outcome, seconds);
        // A child logger is made only for an adapter that logs more about the message (its dead letter), so that
        // a duplicate, which below debug logs nothing, does not pay for one.
        let log: Logger | undefined;
        const handled: Handled = {
          outcome,
          event,
          get log() {
            log ??= deps.logger.child(fields);
            return log;
          },
        };
        deps.observe?.(channel, handled, seconds);
        return handled;
      },
    );
  };
}

/**
 * A message that is no event is refused, unless the same message was refused before and its dead letter stands:
 * then it is taken, so that a broker which sends rejected messages again forgets it. A replay is an operator's
 * decision to try again, never recognised. Should the lookup fail, the refusal recognises it as it stores.
 */
async function refuseInvalid(
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

/**
 * 3–5 for a parsed event: check its identity, then read S/4HANA and write the effect, retrying transient
 * failures. Never throws: a failure becomes a release (transient) or a reject (permanent). An event refused
 * before (conflict, delivery limit, permanent failure) whose dead letter stands is taken without any work, as
 * refuseInvalid says; a replay again excepted.
 */
async function checkIdentityThenApply(
  deps: EventHandlerDeps,
  checkInbox: (event: ParsedEvent, channel: Channel) => Promise<InboxEntry>,
  event: ParsedEvent,
  trace: Context,
  channel: Channel,
  signal?: AbortSignal,
): Promise<Outcome> {
  try {
    // The first database call of a delivery: a blip here is retried like one in readOrderThenWriteEffect().
    const inbox = await inSpan('identity check', { attributes: DATABASE }, trace, () =>
      retry(() => checkInbox(event, channel), deps.retryPolicy, signal),
    );
    if (inbox.processedHash !== null && samePayload(inbox.processedHash, event)) return accept('duplicate');
    if (inbox.refused && channel !== 'replay') return accept('already_refused');
    if (inbox.processedHash !== null) return reject('conflict', conflictReason(inbox.processedHash));
    // Refused with the count kept: the refusal (refuse.ts) clears it only together with storing the dead letter.
    if (inbox.attempts > deps.maxDeliveries) {
      return reject('delivery_limit', deliveryLimitReason(inbox.attempts, inbox.lastError));
    }
    return await retry(() => readOrderThenWriteEffect(deps, event, trace, signal), deps.retryPolicy, signal);
  } catch (err) {
    const reason = failureReason(err);
    if (classify(err) === 'permanent') return reject('permanent_failure', reason);
    await noteAttemptError(deps.pool, event, reason).catch(() => {
      // The database may be what failed; the delivery count is already recorded, the error text is a courtesy.
    });
    return { kind: 'release', code: 'transient_failure', reason };
  }
}

/** 4–5, one try: read the order from S/4HANA, then the one transaction. Throws on failure. */
async function readOrderThenWriteEffect(
  deps: EventHandlerDeps,
  event: ParsedEvent,
  trace: Context,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  if (event.salesOrder === undefined) {
    // One statement: atomic on its own, no transaction needed.
    return accept((await recordProcessed(deps.pool, event, 'ignored')) ? 'ignored' : 'duplicate');
  }
  // Never trust the event's data beyond the key: the order's current state comes from S/4HANA, read
  // before the transaction opens.
  const salesOrder = event.salesOrder;
  const { order, readAt } = await inSpan(
    'S/4HANA read',
    { kind: SpanKind.CLIENT, attributes: { 'sap.sales_order': salesOrder } },
    trace,
    (_span, read) => deps.readOrder(salesOrder, signal, read),
  );
  if (order === null) {
    return accept((await recordProcessed(deps.pool, event, 'not_found')) ? 'not_found' : 'duplicate');
  }
  const { result, mailQueued } = await inSpan(
    'transaction',
    { attributes: DATABASE },
    trace,
    (_span, transaction) => deps.writeEffect(event, toPortalOrder(order, readAt), transaction),
  );
  if (mailQueued) deps.onMailQueued();
  return accept(result);
}

const DATABASE = { 'db.system.name': 'postgresql' };

function deliveryLimitReason(attempts: number, lastError: string | null): string {
  const last = lastError ?? 'none recorded; the process may have died while handling it';
  return `delivery limit reached: ${attempts - 1} deliveries did not complete (last error: ${last})`;
}

function conflictReason(recordedHash: string): string {
  const reason = 'conflict: this source and id were processed with a different payload';
  // Recorded before the hash covered meaning only: a copy whose attributes were rewritten cannot be told apart.
  return isLegacyHash(recordedHash)
    ? `${reason} (recorded by an earlier version, compared as written)`
    : reason;
}
