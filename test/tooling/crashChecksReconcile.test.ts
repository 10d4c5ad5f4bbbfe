// The crash suite's reconciliation: the plan drops the events of some changes and aims a kill at a run in every
// phase; S/4HANA's clock stamps changes in order; the judges hold repairs, runs and marks to the rules.
import { describe, expect, it } from 'vitest';
import { checkMarks, checkRepairs, checkRuns, type RunRow, reconcileId } from '../crash/reconcileChecks.js';
import { createS4Clock } from '../crash/reconcileLoad.js';
import { planRun } from '../crash/scenario.js';

const STAMP = '2026-12-07T02:40:00.1230000Z';

describe('the plan', () => {
  const plan = planRun(11, { orders: 60, phases: 6, changeShare: 0.5 });

  it('drops the events of some changes of orders and returns, never of a created order or a followed-up one', () => {
    const droppedOrders = plan.flatMap((phase) => phase.changes.filter((change) => change.dropped));
    const droppedReturns = plan.flatMap((phase) => phase.returnChanges.filter((change) => change.dropped));
    expect(droppedOrders.length).toBeGreaterThan(0);
    expect(droppedReturns.length).toBeGreaterThan(0);
    for (const phase of plan) {
      for (const change of phase.changes.filter((c) => c.dropped)) {
        const key = change.state.salesOrder;
        expect(change.kind).not.toBe('created');
        expect(phase.changes.filter((c) => c.state.salesOrder === key)).toHaveLength(1);
        expect(phase.aimedOrder).not.toBe(key);
        const bodies = phase.batches.flat().map((message) => message.body);
        expect(bodies.filter((body) => body.includes(`"SalesOrder":"${key}"`))).toEqual([]);
      }
      for (const change of phase.returnChanges.filter((c) => c.dropped)) {
        const bodies = phase.batches.flat().map((message) => message.body);
        expect(
          bodies.filter((body) => body.includes(`"CustomerReturn":"${change.state.customerReturn}"`)),
        ).toEqual([]);
      }
    }
  });

  it('aims one kill of every phase at a reconciliation run', () => {
    for (const phase of plan) {
      expect(phase.actions.filter((action) => action.kind === 'kill' && action.atRun)).toHaveLength(1);
    }
  });
});

describe('createS4Clock', () => {
  it('stamps in order, at least a millisecond apart, and keeps each family’s newest as a 7-digit stamp', () => {
    const clock = createS4Clock();
    const stamps = Array.from({ length: 5 }, () => clock.stamp('salesOrder'));
    const last = clock.stamp('customerReturn');
    for (let i = 1; i < stamps.length; i++)
      expect((stamps[i] as string) > (stamps[i - 1] as string)).toBe(true);
    expect(clock.newest.get('salesOrder')).toBe(`${(stamps[4] as string).slice(0, 23)}0000Z`);
    expect(clock.newest.get('customerReturn')).toBe(`${last.slice(0, 23)}0000Z`);
  });
});

describe('checkRepairs', () => {
  const dropped = [
    { family: 'salesOrder' as const, key: '8100003', stamp: STAMP },
    { family: 'customerReturn' as const, key: '61000001', stamp: STAMP },
  ];

  it('accepts dropped changes recorded under their reconciled identity', () => {
    expect(reconcileId(dropped[0] as (typeof dropped)[0])).toBe(`salesOrder:8100003:${STAMP}`);
    expect(checkRepairs(dropped, new Set(dropped.map(reconcileId)))).toEqual([]);
  });

  it('names a dropped change no run recorded, also when only an older stamp of it was', () => {
    const older = `customerReturn:61000001:2026-12-07T02:39:00.0000000Z`;
    expect(checkRepairs(dropped, new Set([reconcileId(dropped[0] as (typeof dropped)[0]), older]))).toEqual([
      `customerReturn 61000001: its change of ${STAMP} had no event and no run repaired it`,
    ]);
  });
});

describe('checkRuns', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 11, 7, 2, 40, s));
  const run = (id: number, family: string, mode: string, status: string, ended?: number): RunRow => ({
    id,
    family,
    mode,
    status,
    startedAt: at(id),
    endedAt: ended === undefined ? null : at(ended),
    errorText: status === 'failed' ? 'Interrupted' : null,
  });
  const stopping = at(50).getTime();

  it('accepts baselines first, done runs, a failed run resumed by a later one, and one failed at shutdown', () => {
    const runs = [
      run(1, 'salesOrder', 'baseline', 'done', 2),
      run(2, 'customerReturn', 'baseline', 'done', 3),
      run(3, 'salesOrder', 'delta', 'failed', 5),
      run(4, 'salesOrder', 'delta', 'done', 6),
      run(5, 'customerReturn', 'delta', 'failed', 55),
    ];
    expect(checkRuns(runs, stopping)).toEqual([]);
  });

  it('names a run still running, a failed run nothing resumed, and a family that began without a baseline', () => {
    const runs = [
      run(1, 'salesOrder', 'baseline', 'done', 2),
      run(2, 'customerReturn', 'delta', 'done', 3),
      run(3, 'salesOrder', 'delta', 'running'),
      run(4, 'customerReturn', 'delta', 'failed', 10),
      run(5, 'salesOrder', 'delta', 'done', 12),
    ];
    expect(checkRuns(runs, stopping)).toEqual([
      'the first customerReturn run (2) was a delta, not a baseline',
      'salesOrder delta run 3 is still running after the fleet stopped',
      'customerReturn delta run 4 failed (Interrupted) and no later run completed',
    ]);
  });

  it('excuses a run still running only when a kill came after its start and no run of its family after the kill', () => {
    const runs = [
      run(1, 'salesOrder', 'baseline', 'done', 2),
      run(2, 'customerReturn', 'baseline', 'done', 3),
      run(3, 'salesOrder', 'delta', 'running'),
      run(4, 'customerReturn', 'delta', 'running'),
      run(6, 'customerReturn', 'delta', 'done', 7),
    ];
    // Killed at 5 s: salesOrder's run 3 was never seen by a later run; customerReturn's run 6 started after the
    // kill and should have marked run 4 interrupted.
    expect(checkRuns(runs, stopping, [at(5).getTime()])).toEqual([
      'customerReturn delta run 4 is still running after the fleet stopped',
    ]);
    // A kill before the run started explains nothing.
    expect(checkRuns(runs.slice(0, 3), stopping, [at(2).getTime()])).toEqual([
      'salesOrder delta run 3 is still running after the fleet stopped',
    ]);
  });
});

describe('checkMarks', () => {
  const newest = new Map([
    ['salesOrder', STAMP],
    ['customerReturn', STAMP],
  ]);

  it('accepts marks at or behind the newest stamp S/4HANA wrote', () => {
    expect(
      checkMarks(
        [
          { family: 'salesOrder', mark: STAMP },
          { family: 'customerReturn', mark: '2026-12-07T02:39:59.9990000Z' },
        ],
        newest,
      ),
    ).toEqual([]);
  });

  it('names a mark ahead of every document, by a fraction of a millisecond too, and a mark of a family without one', () => {
    expect(
      checkMarks(
        [
          { family: 'salesOrder', mark: '2026-12-07T02:40:00.1230001Z' },
          { family: 'other', mark: STAMP },
        ],
        newest,
      ),
    ).toEqual([
      `salesOrder's mark 2026-12-07T02:40:00.1230001Z is ahead of S/4HANA's newest stamp ${STAMP}`,
      `other has the mark ${STAMP} but S/4HANA has no document of it`,
    ]);
  });
});
