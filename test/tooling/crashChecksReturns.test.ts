// The crash suite's customer returns: the plan deletes a return in every run and sends what arrives after a
// deletion, return reads meet faults of their own, a deleted return's case is expected withdrawn with the values
// it had, and the judges hold a case's emails and PUTs to the same rules as an order's.
import { describe, expect, it } from 'vitest';
import type { PortalRequest } from '../../sandbox/portalServer.js';
import type { ReceivedMail } from '../../sandbox/smtpServer.js';
import type { WarrantyCaseBody } from '../../src/families/customerReturn/pushResource.js';
import { expectedCase } from '../crash/caseStatusTable.js';
import { checkCaseMail } from '../crash/checks.js';
import { createS4Faults } from '../crash/faults.js';
import { checkPortalPuts } from '../crash/portalChecks.js';
import { planRun } from '../crash/scenario.js';

const RETURN = {
  customerReturn: '61000001',
  lastChangeDateTime: '2026-11-30T08:00:00Z',
  soldToParty: '17100001',
  customerReference: 'RMA-1234',
  orderReason: '009',
  referenceSDDocument: '8100000',
  referenceSDDocumentCategory: 'C',
  overallSDProcessStatus: 'B',
  rejectionStatus: 'A',
  items: [
    { customerReturnItem: '10', returnReason: '103' },
    { customerReturnItem: '20', returnReason: '009' },
  ],
};

describe('expectedCase', () => {
  it('takes the values the contracts name, and keeps them when the return is deleted', () => {
    const live = {
      caseStatus: 'InProcess',
      soldToParty: '17100001',
      customerReference: 'RMA-1234',
      salesOrder: '8100000',
      returnReasons: ['009', '103'],
    };
    expect(expectedCase(RETURN)).toEqual(live);
    expect(expectedCase(RETURN, true)).toEqual({ ...live, caseStatus: 'Withdrawn' });
    expect(expectedCase({ ...RETURN, referenceSDDocumentCategory: 'M' }).salesOrder).toBeNull();
  });
});

describe('planRun with customer returns', () => {
  // Enough seeds that a plan left to chance alone would, with one of them, delete nothing.
  const seeds = Array.from({ length: 40 }, (_, i) => i + 1);

  it('deletes a return in every run, and changes a deleted return no more', () => {
    for (const seed of seeds) {
      const phases = planRun(seed, { orders: 6, phases: 6, changeShare: 0.5 });
      const deletions = phases.flatMap((phase) =>
        phase.returnChanges.filter((c) => c.deleted).map((c) => ({ phase: phase.index, c })),
      );
      expect(deletions.length, `seed ${seed}`).toBeGreaterThan(0);
      for (const { phase, c } of deletions) {
        const later = phases
          .slice(phase + 1)
          .flatMap((p) => p.returnChanges)
          .filter((other) => other.state.customerReturn === c.state.customerReturn);
        expect(later, `seed ${seed}`).toEqual([]);
      }
    }
  });

  it('sends the Deleted event again and a late Changed event in the phase after a deletion', () => {
    for (const seed of seeds) {
      const phases = planRun(seed, { orders: 6, phases: 6, changeShare: 0.5 });
      for (const phase of phases) {
        for (const change of phase.returnChanges.filter((c) => c.deleted)) {
          const key = `"CustomerReturn":"${change.state.customerReturn}"`;
          const ofReturn = (p: (typeof phases)[number]) =>
            p.batches.flat().filter((m) => m.body.includes(key));
          const deleted = ofReturn(phase).filter((m) => m.body.includes('.Deleted.v1'));
          expect(deleted.length).toBeGreaterThan(0);
          const next = phases[phase.index + 1];
          if (next === undefined) throw new Error(`seed ${seed}: a deletion in the last phase`);
          const after = ofReturn(next);
          expect(after.map((m) => /CustomerReturn\.(\w+)\.v1/.exec(m.body)?.[1]).sort()).toEqual([
            'Changed',
            'Deleted',
          ]);
          const again = after.find((m) => m.body.includes('.Deleted.v1'));
          expect(again?.identity).toBe(deleted[0]?.identity);
          expect(next.identities).not.toContain(again?.identity);
          const late = after.find((m) => m.body.includes('.Changed.v1'));
          expect(next.identities).toContain(late?.identity);
        }
      }
    }
  });

  it("announces a lagging return's creation a batch before S/4HANA has it", () => {
    const lagging = seeds.flatMap((seed) => {
      const [first] = planRun(seed, { orders: 6, phases: 6, changeShare: 0.5 });
      return (first?.returnChanges ?? [])
        .filter((c) => c.batch === 1)
        .map((c) => ({ batch: first?.batches[0] ?? [], customerReturn: c.state.customerReturn }));
    });
    expect(lagging.length).toBeGreaterThan(0);
    for (const { batch, customerReturn } of lagging) {
      const created = batch.filter(
        (m) => m.body.includes('.Created.v1') && m.body.includes(`"CustomerReturn":"${customerReturn}"`),
      );
      expect(created.length).toBeGreaterThan(0);
    }
  });
});

describe('createS4Faults', () => {
  it("fails returns' reads as orders', counted apart, with outages of their own", () => {
    const faults = createS4Faults(7, { unavailable: 0.5, hang: 0 });
    faults.returns.outage('61000001', 2);
    expect([1, 2].map((n) => faults.returns.fn('61000001', n))).toEqual(['unavailable', 'unavailable']);
    const drawn = Array.from({ length: 40 }, (_, n) => faults.returns.fn('61000002', n + 1));
    expect(drawn).toContain('unavailable');
    expect(drawn).toContain('ok');
    expect(faults.returns.counts).toEqual({
      unavailable: drawn.filter((f) => f === 'unavailable').length,
      hang: 0,
      outage: 2,
    });
    expect(faults.orders.counts).toEqual({ unavailable: 0, hang: 0, outage: 0 });
  });
});

describe("judging a case's emails and PUTs", () => {
  const caseMail = (messageId: string, status: string) =>
    ({
      messageId,
      headers: { 'x-customer-return': '61000001', 'x-case-status': status },
    }) as unknown as ReceivedMail;

  it('accepts the email of a withdrawal, and reports a second one once the case stays withdrawn', () => {
    const known = new Set<string>();
    const withdrawn = new Map([['61000001', ['Withdrawn' as const]]]);
    expect(checkCaseMail([caseMail('<w>', 'Withdrawn')], withdrawn, known)).toEqual([]);
    expect(
      checkCaseMail([caseMail('<w>', 'Withdrawn'), caseMail('<x>', 'Withdrawn')], new Map(), known),
    ).toEqual(['return 61000001 did not change but got 1 email(s)']);
  });

  const put = (key: string, at: number, caseStatus: string): PortalRequest<WarrantyCaseBody> => ({
    at,
    salesOrder: '61000001',
    idempotencyKey: key,
    contentType: 'application/json',
    body: {
      customerReturn: '61000001',
      caseStatus,
      soldToParty: '17100001',
      customerReference: 'RMA-1234',
      salesOrder: '8100000',
      returnReasons: ['009', '103'],
      s4ChangedAt: '2026-11-30T08:00:00.000Z',
    },
    status: 200,
    repeated: false,
  });

  it('accepts a withdrawal pushed after the state it withdraws, and reports one state pushed twice', () => {
    const inProcess = put('k1', 1000, 'InProcess');
    const none = { claims: new Map(), kills: [], restarts: [], failedPushes: [] };
    expect(checkPortalPuts([inProcess, put('k2', 2000, 'Withdrawn')], none, 'return')).toEqual({
      repeats: [],
      findings: [],
    });
    const twice = checkPortalPuts(
      [inProcess, put('k2', 2000, 'Withdrawn'), put('k3', 3000, 'Withdrawn')],
      none,
      'return',
    );
    expect(twice.findings).toEqual([
      `return 61000001: two pushes in a row of the same state ${JSON.stringify({
        customerReturn: '61000001',
        caseStatus: 'Withdrawn',
        soldToParty: '17100001',
        customerReference: 'RMA-1234',
        salesOrder: '8100000',
        returnReasons: ['009', '103'],
      })}`,
    ]);
  });
});
