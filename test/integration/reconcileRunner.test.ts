import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import type { ReconcileFamily } from '../../src/reconcile/collection.js';
import { createCollectionReader } from '../../src/reconcile/collectionReader.js';
import { advanceMark, readMark } from '../../src/reconcile/marks.js';
import { createReconcileRequests } from '../../src/reconcile/reconcileRequests.js';
import {
  createReconcileRunner,
  type Reconciled,
  type ReconcilePort,
  type RunContext,
  type RunEnd,
} from '../../src/reconcile/runner.js';
import { latestRuns } from '../../src/reconcile/runs.js';
import { scheduleReconcile } from '../../src/reconcile/schedule.js';
import { type Stamp, stampAt } from '../../src/reconcile/stamp.js';
import { createDestinationLimit } from '../../src/s4/destinationLimit.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { registerDestination } from '../support/destination.js';
import { type Gate, gate } from '../support/gate.js';
import { guardedLogger } from '../support/logGuard.js';
import { customerReturns, salesOrders } from '../support/reconcileCollections.js';
import { eventually } from '../support/waits.js';

const SOURCE = '/default/sap.s4.beh/S4HCLNT100';
const SETTINGS = { source: SOURCE, overlapMs: 15 * 60_000, settleMs: 2 * 60_000 };
const MINUTE = 60_000;

/** An ISO instant `ms` before now, with digits below the millisecond as S/4HANA writes them. */
const ago = (ms: number, sub = '0000') => stampAt(Date.now() - ms).replace('0000Z', `${sub}Z`);

/**
 * The effect as the port sees it: every document handed over, in order, and a repair for each (key, stamp) it has
 * not held before, as the regression guard and the ledger would decide. `hold` stops a page until opened.
 */
function recordingPort() {
  const handed: Array<{ family: ReconcileFamily; document: Reconciled<unknown>; run: RunContext }> = [];
  const held = new Set<string>();
  const open = new Map<ReconcileFamily, string[]>();
  let hold: { page: number; gate: Gate; reached: Gate } | undefined;
  let pages = 0;
  const port: ReconcilePort = {
    async apply(family, documents, run) {
      pages += 1;
      if (hold !== undefined && pages === hold.page) {
        hold.reached.open();
        await hold.gate.opened;
      }
      let repairs = 0;
      for (const document of documents) {
        handed.push({ family, document, run });
        const id = `${family}:${document.key}:${document.kind === 'current' ? document.stamp : 'deleted'}`;
        if (!held.has(id)) repairs += 1;
        held.add(id);
      }
      return { repairs };
    },
    openKeys: async (family) => open.get(family) ?? [],
  };
  return {
    port,
    handed,
    keys: (runId?: string) =>
      handed
        .filter((entry) => runId === undefined || entry.run.id === runId)
        .map((entry) => entry.document.key),
    setOpen: (family: ReconcileFamily, keys: string[]) => open.set(family, keys),
    holdPage(page: number) {
      pages = 0;
      hold = { page, gate: gate(), reached: gate() };
      return hold;
    },
  };
}

describe('reconciliation runs', () => {
  let s4: S4Server;
  let db: TestDatabase;
  let destination: string;

  function runner(port: ReconcilePort, pool: pg.Pool = db.pool, pageSize = 3, signal?: AbortSignal) {
    const requests = createReconcileRequests({
      destination,
      timeoutMs: 5000,
      limit: createDestinationLimit({ maxConcurrent: 4 }),
    });
    return createReconcileRunner({
      pool,
      reader: createCollectionReader(requests, pageSize),
      collections: { salesOrder: salesOrders('v2'), customerReturn: customerReturns('v4') },
      settings: SETTINGS,
      port,
      signal,
    });
  }

  async function run(
    runs: ReturnType<typeof runner>,
    family: ReconcileFamily,
    mode?: 'delta' | 'sweep' | 'baseline',
  ): Promise<RunEnd> {
    const started = await runs.start(family, mode);
    if (started === 'busy') throw new Error('busy');
    return started.ended;
  }

  const mark = (family: ReconcileFamily) => readMark(db.pool, SOURCE, family);
  const runRecord = async (id: string) => (await latestRuns(db.pool, 100)).find((r) => r.id === id);

  // A stand-in and a database of its own for each test: a baseline reads whatever S/4HANA holds.
  beforeEach(async () => {
    s4 = await startS4Server();
    destination = registerDestination(s4.url);
    db = await createTestDatabase();
    return async () => {
      await s4.close();
      await db.drop();
    };
  });

  const setOrders = (keys: string[], stamp: (i: number) => string, status = 'A') => {
    keys.forEach((salesOrder, i) => {
      s4.setOrder({ salesOrder, lastChangeDateTime: stamp(i), overallSDProcessStatus: status });
    });
  };

  it('starts with a baseline of the open documents, then hands every change whose event never came to the effect', async () => {
    const effect = recordingPort();
    const runs = runner(effect.port);
    setOrders(['101', '102', '103', '104'], (i) => ago(3 * 60 * MINUTE - i * MINUTE));
    s4.setOrder({ salesOrder: '105', lastChangeDateTime: ago(60 * MINUTE), overallSDProcessStatus: 'C' });
    s4.returns.setReturn({ customerReturn: '60000001', lastChangeDateTime: ago(30 * MINUTE), items: [] });

    const baseline = await run(runs, 'salesOrder');
    expect(baseline.status).toBe('done');
    expect(effect.keys(baseline.id)).toEqual(['101', '102', '103', '104']);
    expect(effect.handed[0]?.run).toMatchObject({ mode: 'baseline', windowFrom: null });
    const baselineMark = (await mark('salesOrder')) as Stamp;
    expect(baselineMark).toBe((await runRecord(baseline.id))?.windowTo);
    // A sweep asked for a family without a mark is a baseline: no email for what merely exists.
    const returnsBaseline = await run(runs, 'customerReturn', 'sweep');
    expect(await runRecord(returnsBaseline.id)).toMatchObject({ mode: 'baseline', status: 'done' });

    // Changes made after the baseline, whose events were dropped: five orders (one of them now closed) and two returns.
    setOrders(['101', '102', '106', '107'], (i) => ago(60_000, String(1000 + i)));
    s4.setOrder({ salesOrder: '103', lastChangeDateTime: ago(50_000), overallSDProcessStatus: 'C' });
    s4.returns.setReturn({
      customerReturn: '60000001',
      lastChangeDateTime: ago(40_000),
      overallSDProcessStatus: 'B',
    });
    s4.returns.setReturn({ customerReturn: '60000002', lastChangeDateTime: ago(40_000), items: [] });

    const orders = await run(runs, 'salesOrder');
    const returns = await run(runs, 'customerReturn');
    expect(effect.keys(orders.id).sort()).toEqual(['101', '102', '103', '106', '107']);
    expect(effect.keys(returns.id).sort()).toEqual(['60000001', '60000002']);
    expect(await runRecord(orders.id)).toMatchObject({
      mode: 'delta',
      status: 'done',
      rows: 5,
      repairs: 5,
      pages: 3,
      s4Requests: 3,
      errorClass: null,
    });
    // The newest stamp read is beyond the run's start less the settle time: the mark stops at that bound.
    expect(await mark('salesOrder')).toBe((await runRecord(orders.id))?.windowTo);

    // Read again by the next window's overlap, the same changes repair nothing.
    const again = await run(runs, 'salesOrder');
    expect(await runRecord(again.id)).toMatchObject({ rows: 5, repairs: 0 });
  });

  it('reads again a change that became visible after the mark passed its stamp, within the overlap', async () => {
    const effect = recordingPort();
    const runs = runner(effect.port);
    setOrders(['201'], () => ago(60 * MINUTE));
    await run(runs, 'salesOrder', 'baseline');
    const changed = ago(5 * MINUTE);
    setOrders(['202'], () => changed);
    // The baseline's mark is its start less the settle time: begin the window before the change.
    await db.pool.query('update reconcile_mark set mark = $1::text', [ago(20 * MINUTE)]);
    const first = await run(runs, 'salesOrder');
    expect(effect.keys(first.id)).toEqual(['202']);
    expect(await mark('salesOrder')).toBe(changed);

    // Committed late: stamped 10 minutes ago, before the mark, and visible only now.
    const late = ago(10 * MINUTE);
    s4.setOrder({ salesOrder: '203', lastChangeDateTime: late, overallSDProcessStatus: 'B' });
    expect(late < changed).toBe(true);
    const second = await run(runs, 'salesOrder');
    expect(effect.keys(second.id)).toContain('203');
    expect(await mark('salesOrder')).toBe(changed);
  });

  it('reads more documents than a page that share one millisecond, each once, and moves the mark to their stamp', async () => {
    const effect = recordingPort();
    const runs = runner(effect.port, db.pool, 3);
    await run(runs, 'salesOrder', 'baseline');
    const stamp = ago(10 * MINUTE, '4567');
    const keys = Array.from({ length: 10 }, (_, i) => String(300 + i));
    setOrders(keys, () => stamp);
    // Same millisecond in V2's JSON, a later 100 ns digit in its ETag.
    const later = stamp.replace('4567Z', '4568Z');
    s4.setOrder({ salesOrder: '399', lastChangeDateTime: later });
    // The mark of the baseline is now; begin this window before the documents.
    await db.pool.query('update reconcile_mark set mark = $1::text', [ago(12 * MINUTE)]);
    const delta = await run(runs, 'salesOrder');
    expect(delta.status).toBe('done');
    expect(effect.keys(delta.id)).toEqual([...keys, '399']);
    expect(await mark('salesOrder')).toBe(later);
    expect(await runRecord(delta.id)).toMatchObject({ pages: 5, rows: 11 });
  });

  it('moves the mark past no unread page: a 500 mid-window fails the run, a 429 with Retry-After is waited out', async () => {
    const effect = recordingPort();
    const runs = runner(effect.port, db.pool, 2);
    await run(runs, 'salesOrder', 'baseline');
    await db.pool.query('update reconcile_mark set mark = $1::text', [ago(40 * MINUTE)]);
    const before = await mark('salesOrder');
    const stamps = [30, 29, 28, 27, 26].map((minutes) => ago(minutes * MINUTE));
    setOrders(['401', '402', '403', '404', '405'], (i) => stamps[i] as string);

    const n = s4.collectionLog().length;
    s4.setCollectionFault((query) => (query.n === n + 2 ? 'error500' : 'ok'));
    const failed = await run(runs, 'salesOrder');
    expect(failed.status).toBe('failed');
    expect(effect.keys(failed.id)).toEqual(['401', '402']);
    expect(await mark('salesOrder')).toBe(before);
    expect(await runRecord(failed.id)).toMatchObject({
      status: 'failed',
      pages: 1,
      rows: 2,
      errorClass: 'TransientError',
      errorText: expect.stringContaining('HTTP 500'),
    });

    const m = s4.collectionLog().length;
    s4.setCollectionFault((query) => (query.n === m + 2 ? 'tooMany' : 'ok'));
    const resumed = await run(runs, 'salesOrder');
    expect(resumed.status).toBe('done');
    expect(effect.keys(resumed.id)).toEqual(['401', '402', '403', '404', '405']);
    expect(await runRecord(resumed.id)).toMatchObject({ pages: 4, rows: 5, s4Requests: 5 });
    expect(await mark('salesOrder')).toBe(stamps[4]);
  });

  it('records a failed run as failed when the database refuses the first try, as during a failover', async () => {
    const effect = recordingPort();
    const runs = runner(effect.port, db.pool, 2);
    await run(runs, 'salesOrder', 'baseline');
    // PostgreSQL refuses the first write of a failure (a serialization failure, as a failover's sessions see
    // errors), then takes the next.
    await db.pool.query(`
      create sequence write_tries;
      create function refuse_once() returns trigger language plpgsql as $$
      begin
        -- A sequence, as the refusal rolls back what its transaction wrote.
        if nextval('write_tries') = 1 then
          raise exception 'could not serialize access' using errcode = '40001';
        end if;
        return new;
      end $$;
      create trigger refuse_once before update on reconcile_run
        for each row when (new.status = 'failed') execute function refuse_once();`);
    setOrders(['501', '502', '503'], (i) => ago((30 - i) * MINUTE));
    const n = s4.collectionLog().length;
    s4.setCollectionFault((query) => (query.n === n + 1 ? 'error500' : 'ok'));
    const failed = await run(runs, 'salesOrder');
    expect(failed.status).toBe('failed');
    expect((await db.pool.query('select last_value from write_tries')).rows).toEqual([{ last_value: '2' }]);
    expect(await runRecord(failed.id)).toMatchObject({
      status: 'failed',
      errorText: expect.stringContaining('HTTP 500'),
    });
  });

  it('runs one run of a family at a time across instances; a second start is busy', async () => {
    const effect = recordingPort();
    const other = new pg.Pool({ connectionString: db.url, max: 4 });
    try {
      const first = runner(effect.port);
      const second = runner(recordingPort().port, other);
      setOrders(['501'], () => ago(60 * MINUTE));
      const hold = effect.holdPage(1);
      const started = await first.start('salesOrder', 'baseline');
      await hold.reached.opened;
      expect(await second.start('salesOrder')).toBe('busy');
      expect(await first.start('salesOrder')).toBe('busy');
      // Another family is not held up.
      const returns = await second.start('customerReturn', 'baseline');
      expect(returns).not.toBe('busy');
      await (returns as { ended: Promise<RunEnd> }).ended;
      hold.gate.open();
      expect((await (started as { ended: Promise<RunEnd> }).ended).status).toBe('done');
      const next = await second.start('salesOrder');
      expect(next).not.toBe('busy');
      expect((await (next as { ended: Promise<RunEnd> }).ended).status).toBe('done');
    } finally {
      await other.end();
    }
  });

  it('resumes a run killed half-way from its mark: nothing skipped', async () => {
    const killed = recordingPort();
    const instance = new pg.Pool({ connectionString: db.url, max: 4, application_name: 'killed_instance' });
    instance.on('error', () => {});
    const first = runner(killed.port, instance, 2);
    await run(first, 'salesOrder', 'baseline');
    const before = (await mark('salesOrder')) as Stamp;
    const keys = ['601', '602', '603', '604', '605'];
    setOrders(keys, (i) => ago(5 * MINUTE - i * 1000));

    const hold = killed.holdPage(2);
    const started = await first.start('salesOrder', 'delta');
    if (started === 'busy') throw new Error('busy');
    await hold.reached.opened;
    // The instance loses its database sessions, as in a kill or a failover: its lock goes with them.
    await db.pool.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
       where datname = current_database() and application_name = 'killed_instance'`,
    );
    hold.gate.open();
    expect((await started.ended).status).toBe('failed');
    await instance.end().catch(() => {});
    expect(await mark('salesOrder')).toBe(before);

    const effect = recordingPort();
    const resumed = await run(runner(effect.port, db.pool, 2), 'salesOrder');
    expect(resumed.status).toBe('done');
    expect(effect.keys(resumed.id)).toEqual(keys);
    const runsNow = await latestRuns(db.pool, 10);
    expect(runsNow.find((r) => r.id === started.id)).toMatchObject({ status: 'failed' });
    expect(runsNow.filter((r) => r.status === 'running')).toEqual([]);
  });

  it('sweeps the open documents, and hands those the service holds open but S/4HANA closed or deleted', async () => {
    const effect = recordingPort();
    const runs = runner(effect.port);
    setOrders(['701', '702'], () => ago(60 * MINUTE));
    s4.setOrder({ salesOrder: '703', lastChangeDateTime: ago(30 * MINUTE), overallSDProcessStatus: 'C' });
    effect.setOpen('salesOrder', ['701', '703', '704']);
    await advanceMark(db.pool, SOURCE, 'salesOrder', ago(9 * 24 * 60 * MINUTE));
    const sweep = await run(runs, 'salesOrder');
    expect(sweep.status).toBe('done');
    expect(effect.handed[0]?.run.mode).toBe('sweep');
    expect(effect.handed.map((entry) => [entry.document.kind, entry.document.key])).toEqual([
      ['current', '701'],
      ['current', '702'],
      ['current', '703'],
      ['deleted', '704'],
    ]);
    expect(await mark('salesOrder')).toBe((await runRecord(sweep.id))?.windowTo);
  });

  it('runs every family on a timer, and catches up a failed run in the next turn', async () => {
    const effect = recordingPort();
    setOrders(['801'], () => ago(60 * MINUTE));
    s4.setCollectionFault((query) => (query.n === 1 ? 'error500' : 'ok'));
    const schedule = scheduleReconcile({
      runner: runner(effect.port),
      families: ['salesOrder', 'customerReturn'],
      intervalMs: 20,
      logger: guardedLogger(),
    });
    try {
      await eventually('a delta of each family', async () => {
        const runs = await latestRuns(db.pool, 100);
        return (['salesOrder', 'customerReturn'] as const).every((family) =>
          runs.some((r) => r.family === family && r.mode === 'delta' && r.status === 'done'),
        );
      });
    } finally {
      await schedule.stop();
    }
    const runs = await latestRuns(db.pool, 100);
    expect(runs.filter((r) => r.status === 'running')).toEqual([]);
    const orders = runs.filter((r) => r.family === 'salesOrder').reverse();
    expect(orders.slice(0, 2).map((r) => [r.mode, r.status])).toEqual([
      ['baseline', 'failed'],
      ['baseline', 'done'],
    ]);
    expect(effect.keys()).toContain('801');
  });

  it('stops a run before its next page at shutdown, leaving the mark', async () => {
    const effect = recordingPort();
    const runs = runner(effect.port);
    await run(runs, 'salesOrder', 'baseline');
    const before = ago(30 * MINUTE);
    await db.pool.query('update reconcile_mark set mark = $1::text', [before]);
    setOrders(['901', '902', '903', '904'], (i) => ago((20 - i) * MINUTE));
    const shutdown = new AbortController();
    const stopping = runner(effect.port, db.pool, 2, shutdown.signal);
    const hold = effect.holdPage(1);
    const started = await stopping.start('salesOrder');
    if (started === 'busy') throw new Error('busy');
    await hold.reached.opened;
    shutdown.abort();
    hold.gate.open();
    const ended = await started.ended;
    expect(ended.status).toBe('failed');
    expect(effect.keys(started.id)).toEqual(['901', '902']);
    expect(await runRecord(started.id)).toMatchObject({
      pages: 1,
      errorText: expect.stringContaining('shutting down'),
    });
    expect(await mark('salesOrder')).toBe(before);
  });
});
