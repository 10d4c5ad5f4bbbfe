// A document reconciliation read (docs/reconciliation.md) goes the way of an event: it gets an identity, the
// identity check, the family's effect with its regression guard and notification ledger, and the event metrics,
// under the channel `reconcile`. Only the read differs: the row is the current state, so no GET is sent.
//
// Identity: source `<S4_SOURCE>/reconcile`, id `<family>:<key>:<LastChangeDateTime at 7 digits>`, so the same
// change read by two windows is a duplicate. A row without a stamp, and a document S/4HANA no longer has, take
// the run's window end instead: one record per run that finds them so, never more.
import { TransientError } from '../errors.js';
import { ROOT_CONTEXT } from '../telemetry/tracing.js';
import type { Family } from './family.js';
import { checkIdentityThenApply, type EventHandlerDeps } from './handleEvent.js';
import { checkIdentityBatched } from './identityCheck.js';
import { changesRecorded } from './inbox.js';
import type { ParsedEvent } from './parsedEvent.js';
import { payloadHashes } from './payloadHash.js';

/** One document as a run hands it over: its current state, or gone from S/4HANA. */
export type ReadDocument =
  | { kind: 'current'; key: string; stamp: string | null; value: unknown }
  | { kind: 'deleted'; key: string };

/** What of its run the record keeps and the effect obeys. */
export interface ReadRun {
  id: string;
  mode: 'delta' | 'sweep' | 'baseline';
  /** The stamp of a document read without one, or not found. */
  windowTo: string;
}

/** A family as reconciliation writes it: its effect, and the state its Deleted event leaves. */
export interface ReconcileWriter {
  family: Family;
  /** The state of a document S/4HANA no longer has, as after its Deleted event; null: recorded as not found. */
  deleted(key: string, readAt: Date): unknown | null;
}

export interface ReconcileReadDeps extends EventHandlerDeps {
  /** S4_SOURCE: the identity's source is this with `/reconcile`. */
  source: string;
  writerOf(family: string): ReconcileWriter | undefined;
}

export type ApplyRead = (
  family: string,
  documents: readonly ReadDocument[],
  run: ReadRun,
) => Promise<{ repairs: number }>;

/**
 * Applies one page through the event path and resolves once every document has committed, with the repairs: the
 * documents whose effect changed what was notified. A baseline's are none: it is the go-live load, and sends no
 * email. A document that could not be applied fails the page, and with it the run, which the next one repeats.
 */
export function createReconcileRead(deps: ReconcileReadDeps): ApplyRead {
  const checkIdentity = checkIdentityBatched(deps.pool);
  const source = `${deps.source}/reconcile`;

  return async (familyName, documents, run) => {
    const writer = deps.writerOf(familyName);
    if (writer === undefined) throw new Error(`${familyName} is not a reconciled family`);
    const readAt = new Date();
    const outcomes = await Promise.all(
      documents.map(async (document) => {
        const stamp = (document.kind === 'current' ? document.stamp : null) ?? run.windowTo;
        const type = `fon.reconcile.${document.kind}`;
        const id = `${familyName}:${document.key}:${stamp}`;
        const event: ParsedEvent = {
          source,
          id,
          type,
          family: familyName,
          key: document.key,
          reconciled: { run: run.id, notify: run.mode !== 'baseline', system: deps.source },
          ...payloadHashes({ type, source, id, data: { key: document.key, stamp } }),
        };
        const state = document.kind === 'current' ? document.value : writer.deleted(document.key, readAt);
        // The read is done: the family is asked for its effect only.
        const family: Family = { read: async () => state, writeEffect: writer.family.writeEffect };
        const started = process.hrtime.bigint();
        const outcome = await checkIdentityThenApply(
          deps,
          checkIdentity,
          event,
          ROOT_CONTEXT,
          'reconcile',
          undefined,
          family,
        );
        deps.observe?.('reconcile', { outcome, event }, Number(process.hrtime.bigint() - started) / 1e9);
        return { id, outcome };
      }),
    );
    const failed = outcomes.find(({ outcome }) => outcome.kind !== 'accept');
    if (failed !== undefined)
      throw new TransientError(
        `${familyName} ${failed.id}: ${failed.outcome.kind === 'accept' ? '' : failed.outcome.reason}`,
      );
    if (run.mode === 'baseline') return { repairs: 0 };
    const ids = outcomes.map(({ id }) => id);
    return { repairs: await changesRecorded(deps.pool, source, ids, run.id) };
  };
}
