// The whole per-message path, in the README's numbered steps: parse → check identity → read S/4HANA → one
// transaction → the outcome to settle, a refusal stored first. It returns what should happen to the message;
// only the transport adapters (AMQP, webhook, Event Hub) act on it. Read top-down: the handler first, each step
// below the one that calls it.

import type { Pool } from 'pg';
import { classify, failureReason } from '../errors.js';
import { type RetryPolicy, retry } from '../retry.js';
import { type Context, inSpan } from '../telemetry/tracing.js';
import { type ParsedEvent, parseCloudEvent } from './cloudEvent.js';
import type { Family, Queued } from './family.js';
import { type CheckIdentity, checkIdentityBatched } from './identityCheck.js';
import { noteAttemptError } from './inbox.js';
import { accept, type Channel, type HandleEvent, type Outcome, reject } from './outcome.js';
import { type Observers, observed } from './outcomeReport.js';
import { isLegacyHash, samePayload } from './payloadHash.js';
import { recordProcessed } from './processedRecord.js';
import { outcomeOfInvalid, refuseRejected } from './refuse.js';
import { keyedSerializer } from './serializeByKey.js';

export type { HandleContext, Handled, HandleEvent } from './outcome.js';

export interface EventHandlerDeps extends Observers {
  pool: Pool;
  /** The family that reads an event's state and writes its effect; undefined: the event only gets recorded. */
  familyOf: (event: ParsedEvent) => Family | undefined;
  /** Called after a commit that queued an email or a portal push, so the senders need not wait for their poll. */
  onQueued: (queued: Queued) => void;
  retryPolicy: RetryPolicy;
  maxDeliveries: number;
  maxMessageBytes: number;
}

export function createEventHandler(deps: EventHandlerDeps): HandleEvent {
  // Deliveries of one identity that overlap in this instance run one after the other, so a duplicate that
  // arrives while its original is still in flight finds it processed instead of asking S/4HANA again.
  const oneAtATime = keyedSerializer();
  const checkIdentity = checkIdentityBatched(deps.pool);

  return observed(deps, async function handleEvent(message, context, traced) {
    // 1–2. Received by the adapter; parse.
    const parsed = parseCloudEvent(message, deps.maxMessageBytes, deps.families);
    const event = parsed.ok ? parsed.event : undefined;
    return traced(event, async (trace) => {
      // 3–5. Check identity, read S/4HANA, one transaction.
      const outcome = parsed.ok
        ? await oneAtATime.run(JSON.stringify([parsed.event.source, parsed.event.id]), () =>
            checkIdentityThenApply(deps, checkIdentity, parsed.event, trace, context.channel, context.signal),
          )
        : await outcomeOfInvalid(deps.pool, message, context.channel, parsed.reason);
      if (outcome.kind !== 'reject') return { outcome, event };
      // 6. A reject is stored as a dead letter here, before it is counted and logged: the outcome is the final one.
      const log = context.log ?? deps.logger.child({ channel: context.channel });
      return refuseRejected(deps.pool, message, { ...context, log, families: deps.families }, outcome, event);
    });
  });
}

/**
 * 3–5 for a parsed event: check its identity, then read S/4HANA and write the effect, retrying transient
 * failures. Never throws: a failure becomes a release (transient) or a reject (permanent). An event refused
 * before (conflict, delivery limit, permanent failure) whose dead letter stands is taken without any work, as
 * outcomeOfInvalid says; a replay again excepted.
 */
export async function checkIdentityThenApply(
  deps: EventHandlerDeps,
  checkIdentity: CheckIdentity,
  event: ParsedEvent,
  trace: Context,
  channel: Channel,
  signal?: AbortSignal,
  /** The family that reads and writes; reconciliation's already holds the state it read (reconcileRead.ts). */
  family = deps.familyOf(event),
): Promise<Outcome> {
  try {
    // The first database call of a delivery: a blip here is retried like one in readThenWriteEffect().
    const inbox = await inSpan('identity check', { attributes: DATABASE }, trace, () =>
      retry(() => checkIdentity(event, channel), deps.retryPolicy, signal),
    );
    if (inbox.processedHash !== null && samePayload(inbox.processedHash, event)) return accept('duplicate');
    if (inbox.refused && channel !== 'replay') return accept('already_refused');
    if (inbox.processedHash !== null) return reject('conflict', conflictReason(inbox.processedHash));
    // Refused with the count kept: the refusal (refuse.ts) clears it only together with storing the dead letter.
    // A reconciled document is no message to dead-letter: its failure fails the run, and the next run tries again.
    if (inbox.attempts > deps.maxDeliveries && channel !== 'reconcile') {
      return reject('delivery_limit', deliveryLimitReason(inbox.attempts, inbox.lastError));
    }
    return await retry(
      () => readThenWriteEffect(deps, family, event, trace, signal),
      deps.retryPolicy,
      signal,
    );
  } catch (err) {
    const reason = failureReason(err);
    if (classify(err) === 'permanent') return reject('permanent_failure', reason);
    await noteAttemptError(deps.pool, event, reason).catch(() => {
      // The database may be what failed; the delivery count is already recorded, the error text is a courtesy.
    });
    return { kind: 'release', code: 'transient_failure', reason };
  }
}

/** 4–5, one try: the family reads the current state, then writes the effect in one transaction. Throws on failure. */
async function readThenWriteEffect(
  deps: EventHandlerDeps,
  family: Family | undefined,
  event: ParsedEvent,
  trace: Context,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  if (family === undefined) {
    // One statement: atomic on its own, no transaction needed.
    return accept((await recordProcessed(deps.pool, event, 'ignored')) ? 'ignored' : 'duplicate');
  }
  const state = await family.read(event, signal, trace);
  if (state === null) {
    return accept((await recordProcessed(deps.pool, event, 'not_found')) ? 'not_found' : 'duplicate');
  }
  const effect = await inSpan('transaction', { attributes: DATABASE }, trace, (_span, transaction) =>
    family.writeEffect(event, state, transaction),
  );
  // 7. Wake the senders of what the commit queued: they send from the outboxes while the adapter settles.
  deps.onQueued(effect);
  return accept(effect.result);
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
