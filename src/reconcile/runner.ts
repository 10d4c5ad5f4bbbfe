// Runs reconciliation for one family of one S/4HANA system: under the family's lock (runLock.ts), it chooses the
// mode (chooseMode.ts), reads page by page (collectionReader.ts), hands each page to the family's effect through
// the `apply` port and counts what it reports, and moves the mark (marks.ts) only once every page has committed.
//
// The mark rule. A delta reads `LastChangeDateTime ge mark − overlap`; at its end the mark moves to the newest
// stamp it read, but never past the run's start less the settle time: a change S/4HANA stamped before that bound
// and committed after the read is read again by the next window's overlap. A sweep or a baseline reads every open
// document, and the documents the service holds as open that the sweep did not find (by key: closed since, or
// deleted); the state it leaves is that of the run's start, so the mark moves to that bound. A run that fails or
// stops leaves the mark where it was: the next one reads the same window again, and the effect's identity check
// makes the rows it already applied duplicates.
import type { Pool } from 'pg';
import type { ReconcileSettings } from '../config/reconcileConfig.js';
import { withTransaction } from '../db/transaction.js';
import { TransientError } from '../errors.js';
import { BOOKING_RETRY, retry } from '../retry.js';
import { chooseMode } from './chooseMode.js';
import { collectionProblem, type ReconcileCollection, type ReconcileFamily } from './collection.js';
import type { CollectionReader, ReadPage } from './collectionReader.js';
import { advanceMark, readMark } from './marks.js';
import { type RunLock, tryRunLock } from './runLock.js';
import {
  countPage,
  endInterrupted,
  endRun,
  insertRun,
  lastSweep,
  type RunMode,
  type RunTotals,
} from './runs.js';
import { type Stamp, stampAt, stampMinus } from './stamp.js';

/** One document as reconciliation hands it to its family's effect. */
export type Reconciled<T> =
  /** Its current state, read at `stamp` (LastChangeDateTime at 7 digits; null if S/4HANA gives none). */
  | { kind: 'current'; key: string; stamp: Stamp | null; value: T }
  /** S/4HANA no longer has it: the family's Deleted event. */
  | { kind: 'deleted'; key: string };

export interface RunContext {
  id: string;
  source: string;
  family: ReconcileFamily;
  mode: RunMode;
  windowFrom: Stamp | null;
  windowTo: Stamp;
}

export interface ReconcilePort {
  /**
   * Applies one page of documents as the family's effect (a baseline sends no email) and resolves once they have
   * committed, with how many of them changed what the service held: repairs.
   */
  apply(
    family: ReconcileFamily,
    documents: Array<Reconciled<unknown>>,
    run: RunContext,
  ): Promise<{ repairs: number }>;
  /** The keys of the family's documents the service holds as open: a sweep reads those it did not find. */
  openKeys(family: ReconcileFamily): Promise<string[]>;
}

export type RunEnd =
  | ({ id: string; status: 'done' } & RunTotals)
  | { id: string; status: 'failed'; error: unknown };

export interface ReconcileRunner {
  /** Starts a run of `family` (its mode chosen unless given) and returns its id; 'busy' while one is going on. */
  start(family: ReconcileFamily, mode?: RunMode): Promise<{ id: string; ended: Promise<RunEnd> } | 'busy'>;
}

export interface ReconcileRunnerOptions {
  pool: Pool;
  reader: CollectionReader;
  collections: Partial<Record<ReconcileFamily, ReconcileCollection<unknown>>>;
  settings: Pick<ReconcileSettings, 'source' | 'overlapMs' | 'settleMs'>;
  port: ReconcilePort;
  /** This service's clock (Date.now()); the settle bound is its one meeting with S/4HANA's. */
  now?: () => number;
  /** Shutdown: a run stops before its next page, failed, and the next one starts from the mark. */
  signal?: AbortSignal;
  /** Sees every page once it has committed: metrics. Must not throw. */
  observe?: (family: ReconcileFamily, page: { rows: number; repairs: number; requests: number }) => void;
}

export function createReconcileRunner(options: ReconcileRunnerOptions): ReconcileRunner {
  const { pool, reader, settings, port } = options;
  const now = options.now ?? Date.now;
  const { source } = settings;
  for (const collection of Object.values(options.collections)) {
    const problem = collection && collectionProblem(collection);
    if (problem !== undefined) throw new Error(problem);
  }

  async function start(family: ReconcileFamily, asked?: RunMode) {
    const collection = options.collections[family];
    if (collection === undefined) throw new Error(`no collection is described for ${family}`);
    const lock = await tryRunLock(pool, source, family);
    if (lock === undefined) return 'busy' as const;
    let run: RunContext;
    try {
      await endInterrupted(pool, source, family);
      const mark = await readMark(pool, source, family);
      const startedAt = now();
      const mode = asked ?? chooseMode(mark, await lastSweep(pool, source, family), startedAt);
      // Without a mark the family is new to this service: whatever is asked, only a baseline (no email) runs.
      const effective: RunMode = mark === undefined ? 'baseline' : mode;
      const windowTo = stampAt(startedAt - settings.settleMs);
      const windowFrom = effective === 'delta' ? stampMinus(mark as Stamp, settings.overlapMs) : null;
      const id = await insertRun(pool, { source, family, mode: effective, windowFrom, windowTo });
      run = { id, source, family, mode: effective, windowFrom, windowTo };
    } catch (err) {
      await lock.release();
      throw err;
    }
    const ended = execute(collection, run, lock)
      .then(async (newMark): Promise<RunEnd> => {
        const totals = await withTransaction(pool, async (tx) => {
          if (newMark !== undefined) await advanceMark(tx, source, family, newMark);
          return endRun(tx, run.id);
        });
        return { id: run.id, status: 'done', ...totals };
      })
      .catch(async (error: unknown): Promise<RunEnd> => {
        // The failure is often the database's own (a failover): a run left `running` reads as still going until
        // the family's next run marks it interrupted.
        await retry(() => endRun(pool, run.id, failureOf(error)), BOOKING_RETRY, options.signal).catch(
          () => {},
        );
        return { id: run.id, status: 'failed', error };
      })
      .finally(() => lock.release());
    return { id: run.id, ended };

    /** Reads and applies every page; resolves with the mark the run vouches for, if it moves it. */
    async function execute(
      collection: ReconcileCollection<unknown>,
      run: RunContext,
      lock: RunLock,
    ): Promise<Stamp | undefined> {
      const page = async (read: ReadPage<unknown>, documents: Array<Reconciled<unknown>>) => {
        if (options.signal?.aborted)
          throw new TransientError('the run stopped before its next page: shutting down');
        // Never apply without the lock: another instance may have taken the family over.
        await lock.held();
        const { repairs } =
          documents.length === 0 ? { repairs: 0 } : await port.apply(family, documents, run);
        const counted = { rows: documents.length, repairs, requests: read.requests };
        await countPage(pool, run.id, counted);
        options.observe?.(family, counted);
      };
      const current = (read: ReadPage<unknown>) =>
        read.rows.map((row): Reconciled<unknown> => ({ kind: 'current', ...row }));

      if (run.mode === 'delta') {
        let newest: Stamp | undefined;
        for await (const read of reader.window(collection, run.windowFrom as Stamp)) {
          await page(read, current(read));
          for (const row of read.rows)
            if (newest === undefined || (row.stamp as Stamp) > newest) newest = row.stamp as Stamp;
        }
        // Never past the settle bound; never back either (advanceMark keeps the newer one).
        if (newest === undefined) return undefined;
        return newest < run.windowTo ? newest : run.windowTo;
      }

      const seen = new Set<string>();
      for await (const read of reader.open(collection)) {
        for (const row of read.rows) seen.add(row.key);
        await page(read, current(read));
      }
      const unseen = (await port.openKeys(family)).filter((key) => !seen.has(key));
      if (unseen.length > 0) {
        const read = await reader.keys(collection, unseen);
        await page(read, [
          ...current(read),
          ...read.missing.map((key) => ({ kind: 'deleted' as const, key })),
        ]);
      }
      return run.windowTo;
    }
  }

  return { start };
}

function failureOf(error: unknown): { errorClass: string; errorText: string } {
  const err = error as { name?: unknown; message?: unknown } | null;
  return {
    errorClass: typeof err?.name === 'string' ? err.name : 'Error',
    errorText: (typeof err?.message === 'string' ? err.message : String(error)).slice(0, 1000),
  };
}
