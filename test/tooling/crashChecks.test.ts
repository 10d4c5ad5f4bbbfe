// The crash suite's judges: every queued email ends received once, or resent once per crash of the instance
// that held its lease (or per PostgreSQL restart between its claims), or parked with a reason; a portal key
// repeats after an answer only after its holder's crash, a PostgreSQL restart between its claims, or its holder
// logged that try as timed out; the expected portal status follows the status table in docs/contracts.md, not the
// service's code; every phase but the one restarting PostgreSQL has a failover that terminated sessions.
import { describe, expect, it } from 'vitest';
import type { PortalRequest } from '../../sandbox/portalServer.js';
import type { ReceivedMail } from '../../sandbox/smtpServer.js';
import { expectedCaseStatus } from '../crash/caseStatusTable.js';
import { checkCaseMail, checkMail, longestDelay } from '../crash/checks.js';
import { checkEveryEmail, type QueuedMail } from '../crash/emailEndings.js';
import type { Claim, Kill } from '../crash/holderCrash.js';
import { phasesWithoutFailover } from '../crash/phaseFailovers.js';
import { checkPortalPuts, type FailedPush, type PushEvidence } from '../crash/portalChecks.js';
import { expectedStatus } from '../crash/portalStatusTable.js';

const ID = '<resent@fleet.example>';
const row: QueuedMail = {
  messageId: ID,
  salesOrder: '8100001',
  customerReturn: null,
  state: 'sent',
  attempts: 3,
  lastError: null,
  queuedAt: new Date(1000),
};
const outbox = [row];
const A = 'cell-a:101:0a0a0a0a';
const B = 'cell-b:202:0b0b0b0b';
// Claimed by A at 9 s, by B after A's lease ran out at 25 s, by A's restarted successor at 40 s.
const claims: Claim[] = [
  { claim: 1, attempt: 1, holder: A, at: 9_000 },
  { claim: 2, attempt: 2, holder: B, at: 25_000 },
  { claim: 3, attempt: 3, holder: 'cell-a:303:0c0c0c0c', at: 40_000 },
];

function judge(
  receivedAt: number[],
  kills: Array<{ pid: number; at: number }>,
  options: { rows?: QueuedMail[]; restarts?: Array<{ from: number; to: number }> } = {},
) {
  return checkEveryEmail(options.rows ?? outbox, {
    accepted: new Map(receivedAt.length > 0 ? [[ID, receivedAt]] : []),
    refusedById: new Map(),
    sentLogged: new Map([[ID, 1]]),
    claims: new Map([[ID, claims]]),
    kills,
    restarts: options.restarts ?? [],
  });
}

describe('checkEveryEmail', () => {
  it('accepts an email received once, and a resend for each kill of the holder it went out under', () => {
    expect(judge([10_000], []).findings).toEqual([]);
    expect(judge([10_000, 26_000], [{ pid: 101, at: 10_100 }]).findings).toEqual([]);
    expect(
      judge(
        [10_000, 26_000, 41_000],
        [
          { pid: 101, at: 10_100 },
          { pid: 202, at: 26_100 },
        ],
      ).findings,
    ).toEqual([]);
  });

  it('reports a resend when another instance was killed, however close to the send', () => {
    expect(judge([10_000, 26_000], [{ pid: 202, at: 10_050 }]).findings).toEqual([
      `email ${ID} (order 8100001) received 2 times: delivered again without a crash of its holder ${A}`,
    ]);
  });

  it('reports a resend when its holder was killed only after the next claim', () => {
    expect(judge([10_000, 26_000], [{ pid: 101, at: 25_500 }]).findings).toEqual([
      `email ${ID} (order 8100001) received 2 times: delivered again without a crash of its holder ${A}`,
    ]);
  });

  it('allows one resend per kill: a second resend needs a second crash of its own holder', () => {
    expect(judge([10_000, 26_000, 41_000], [{ pid: 101, at: 10_100 }]).findings).toEqual([
      `email ${ID} (order 8100001) received 3 times: delivered again without a crash of its holder ${B}`,
    ]);
  });

  it('reports an email sent twice under one claim, whatever was killed', () => {
    expect(judge([10_000, 10_500], [{ pid: 101, at: 10_100 }]).findings).toEqual([
      `email ${ID} (order 8100001) received 2 times: delivered twice under one claim of ${A}`,
    ]);
  });

  it('accepts one resend when PostgreSQL restarted between the two claims, but not a database failover', () => {
    const restart = { from: 12_000, to: 14_000 };
    expect(judge([10_000, 26_000], [], { restarts: [restart] }).findings).toEqual([]);
    expect(judge([10_000, 26_000, 41_000], [], { restarts: [restart] }).findings).toHaveLength(1);
  });

  it('reports an email that was queued but never received, one still pending, and one parked without a reason', () => {
    expect(judge([], []).findings).toEqual([
      `email ${ID} (order 8100001) is recorded as sent but the relay never received it`,
    ]);
    expect(judge([], [], { rows: [{ ...row, state: 'pending' }] }).findings).toEqual([
      `email ${ID} (order 8100001) ended pending, received 0 times`,
    ]);
    expect(judge([], [], { rows: [{ ...row, state: 'parked', lastError: null }] }).findings).toEqual([
      `email ${ID} (order 8100001) was parked without a reason`,
    ]);
    expect(
      judge([], [], { rows: [{ ...row, state: 'parked', lastError: '550 mailbox unavailable' }] }).findings,
    ).toEqual([]);
  });

  it("judges a warranty case's email as an order's, and names its return", () => {
    const caseRow = { ...row, salesOrder: null, customerReturn: '61000001' };
    expect(judge([], [], { rows: [caseRow] }).findings).toEqual([
      `email ${ID} (return 61000001) is recorded as sent but the relay never received it`,
    ]);
    expect(judge([10_000, 11_000], [], { rows: [caseRow] }).findings[0]).toMatch(
      /^email <resent@fleet\.example> \(return 61000001\) received 2 times/,
    );
    expect(judge([10_000], [], { rows: [caseRow] }).findings).toEqual([]);
  });

  it('reports an email the relay received that no outbox row queued', () => {
    expect(judge([10_000], [], { rows: [] }).findings).toEqual([
      `email ${ID} was received but has no outbox row`,
    ]);
  });
});

describe('checkPortalPuts', () => {
  const KEY = '5f0c3c2e-7d1a-4f6e-9a43-1b2c3d4e5f60';
  const put = (at: number, status: number): PortalRequest => ({
    at,
    salesOrder: '8100001',
    idempotencyKey: KEY,
    contentType: 'application/json',
    body: {
      salesOrder: '8100001',
      portalStatus: 'Open',
      requestedDeliveryDate: '2026-12-01',
      soldToParty: '17100001',
      customerReference: 'PO-1',
      s4ChangedAt: '2026-11-30T08:00:00Z',
    },
    status,
    repeated: false,
  });
  const evidence = (
    kills: Kill[],
    failedPushes: FailedPush[] = [],
    keyClaims: Claim[] = claims,
    restarts: Array<{ from: number; to: number }> = [],
  ): PushEvidence => ({ claims: new Map([[KEY, keyClaims]]), kills, restarts, failedPushes });
  const timedOut = (pid: number, attempts: number): FailedPush => ({
    pid,
    pushId: KEY,
    attempts,
    reason: 'Error: timeout of 1000ms exceeded',
  });
  const unexplained =
    `order 8100001: key ${KEY} PUT again after its answer: ` +
    `delivered again without a crash of its holder ${A}`;

  it('accepts a retry after a failed try, and a repeat after an answer only after its holder was killed', () => {
    expect(checkPortalPuts([put(10_000, 503), put(26_000, 200)], evidence([])).findings).toEqual([]);
    expect(
      checkPortalPuts([put(10_000, 200), put(26_000, 200)], evidence([{ pid: 101, at: 11_000 }])).findings,
    ).toEqual([]);
  });

  it('reports a repeat after an answer when only another instance was killed', () => {
    expect(
      checkPortalPuts([put(10_000, 200), put(26_000, 200)], evidence([{ pid: 202, at: 11_000 }])).findings,
    ).toEqual([unexplained]);
  });

  it('accepts one repeat after an answer when PostgreSQL restarted between the two claims', () => {
    const restart = { from: 12_000, to: 14_000 };
    const twice = [put(10_000, 200), put(26_000, 200)];
    expect(checkPortalPuts(twice, evidence([], [], claims, [restart])).findings).toEqual([]);
    expect(
      checkPortalPuts([...twice, put(41_000, 200)], evidence([], [], claims, [restart])).findings,
    ).toEqual([
      `order 8100001: key ${KEY} PUT again after its answer: delivered again without a crash of its holder ${B}`,
    ]);
  });

  it('accepts a repeat after an answer that came after its holder logged that try as timed out', () => {
    const judged = checkPortalPuts([put(10_000, 200), put(26_000, 200)], evidence([], [timedOut(101, 1)]));
    expect(judged.findings).toEqual([]);
    expect(judged.repeats).toEqual([
      {
        idempotencyKey: KEY,
        about: 'order 8100001',
        afterAnswer: 1,
        cause: 'its try timed out before the answer came',
      },
    ]);
  });

  it('reports a repeat after an answer when the failure logged is of another try, instance or key, or no timeout', () => {
    const puts = [put(10_000, 200), put(26_000, 200)];
    // The second try timed out, not the answered first; another instance timed out on the first claim's number.
    expect(checkPortalPuts(puts, evidence([], [timedOut(101, 2), timedOut(202, 1)])).findings).toEqual([
      unexplained,
    ]);
    expect(
      checkPortalPuts(puts, evidence([], [{ ...timedOut(101, 1), pushId: 'another-key' }])).findings,
    ).toEqual([unexplained]);
    expect(
      checkPortalPuts(
        puts,
        evidence([], [{ ...timedOut(101, 1), reason: 'portal answered 503: maintenance' }]),
      ).findings,
    ).toEqual([unexplained]);
  });

  it('reports a key sent twice under one claim even when its holder logged a timeout for it', () => {
    expect(
      checkPortalPuts([put(10_000, 200), put(10_500, 200)], evidence([], [timedOut(101, 1)])).findings,
    ).toEqual([
      `order 8100001: key ${KEY} PUT again after its answer: delivered twice under one claim of ${A}`,
    ]);
  });

  it('judges each repeat by its own try: a timeout of the first excuses no PUT after an answered second', () => {
    const judged = checkPortalPuts(
      [put(10_000, 200), put(26_000, 200), put(41_000, 200)],
      evidence([], [timedOut(101, 1)]),
    );
    expect(judged.findings).toEqual([
      `order 8100001: key ${KEY} PUT again after its answer: delivered again without a crash of its holder ${B}`,
    ]);
  });

  it("matches the try by the attempt its claim recorded, which restarts with each new state's key", () => {
    // The key's first claim is the row's fifth, its first attempt: the sender logs attempts 1.
    const ofNewKey = claims.map((c) => ({ ...c, claim: c.claim + 4 }));
    expect(
      checkPortalPuts([put(10_000, 200), put(26_000, 200)], evidence([], [timedOut(101, 1)], ofNewKey))
        .findings,
    ).toEqual([]);
    expect(
      checkPortalPuts([put(10_000, 200), put(26_000, 200)], evidence([], [timedOut(101, 5)], ofNewKey))
        .findings,
    ).toEqual([unexplained]);
  });
});

describe('expectedStatus', () => {
  it('takes the first rule of the contracts table that matches', () => {
    const order = { salesOrder: '1', lastChangeDateTime: '2026-11-30T08:00:00Z' };
    expect(expectedStatus({ ...order, rejectionStatus: 'C', overallDeliveryStatus: 'C' })).toBe('Rejected');
    expect(expectedStatus({ ...order, overallDeliveryStatus: 'C', deliveryBlockReason: '01' })).toBe(
      'Delivered',
    );
    expect(expectedStatus({ ...order, overallTotalDeliveryStatus: 'B' })).toBe('PartiallyDelivered');
    expect(expectedStatus({ ...order, deliveryBlockReason: '01', overallSDProcessStatus: 'B' })).toBe(
      'DeliveryBlocked',
    );
    expect(expectedStatus({ ...order, overallSDProcessStatus: 'B', overallDeliveryStatus: 'A' })).toBe(
      'InProcess',
    );
    expect(expectedStatus({ ...order, overallSDProcessStatus: 'A', deliveryBlockReason: '' })).toBe('Open');
  });
});

describe('expectedCaseStatus', () => {
  it('takes the first rule of the contracts table that matches', () => {
    const base = { customerReturn: '1', lastChangeDateTime: '2026-11-30T08:00:00Z', items: [] };
    expect(expectedCaseStatus({ ...base, rejectionStatus: 'C', overallSDProcessStatus: 'C' })).toBe(
      'Rejected',
    );
    expect(expectedCaseStatus({ ...base, rejectionStatus: 'A', overallSDProcessStatus: 'C' })).toBe(
      'Completed',
    );
    expect(expectedCaseStatus({ ...base, overallSDProcessStatus: 'B' })).toBe('InProcess');
    expect(expectedCaseStatus({ ...base, overallSDProcessStatus: 'A' })).toBe('Open');
  });
});

describe('checkCaseMail', () => {
  const caseMail = (messageId: string, status: string) =>
    ({
      messageId,
      headers: { 'x-customer-return': '61000001', 'x-case-status': status, 'x-sales-order': '8100000' },
    }) as unknown as ReceivedMail;
  const changed = new Map([['61000001', ['InProcess' as const]]]);

  it("accepts a case's email of its new status, and leaves it out of the orders' judging", () => {
    const mails = [caseMail('<a>', 'InProcess')];
    expect(checkCaseMail(mails, changed, new Set())).toEqual([]);
    expect(checkMail(mails, new Map(), new Set())).toEqual([]);
  });

  it('reports a missing case email, one of another status, and one for a case that did not change', () => {
    expect(checkCaseMail([], changed, new Set())).toEqual([
      'return 61000001 changed to InProcess: emails say nothing',
    ]);
    expect(checkCaseMail([caseMail('<a>', 'Open')], changed, new Set())).toEqual([
      'return 61000001: email says Open, S/4HANA went through InProcess',
      'return 61000001 changed to InProcess: emails say Open',
    ]);
    expect(checkCaseMail([caseMail('<a>', 'Open')], new Map(), new Set())).toEqual([
      'return 61000001 did not change but got 1 email(s)',
    ]);
  });
});

describe('checkMail', () => {
  const state = (portalStatus: string, date: string) => ({
    portalStatus: portalStatus as 'Open',
    date,
    customerReference: null,
    soldToParty: null,
  });
  const mail = (messageId: string, status: string, date: string) =>
    ({
      messageId,
      headers: {
        'x-sales-order': '8100001',
        'x-portal-status': status,
        'x-requested-delivery-date': date,
      },
    }) as unknown as ReceivedMail;
  const changed = new Map([['8100001', [state('Open', '2026-12-01'), state('Open', '2026-12-09')]]]);

  it('accepts the emails of an order in the order of its states, and a passed-over state left unmailed', () => {
    const inOrder = [mail('<a>', 'Open', '2026-12-01'), mail('<b>', 'Open', '2026-12-09')];
    expect(checkMail(inOrder, changed, new Set())).toEqual([]);
    expect(checkMail([mail('<c>', 'Open', '2026-12-09')], changed, new Set())).toEqual([]);
  });

  it('reports an email about an earlier state that arrived after one about a later state', () => {
    const reversed = [mail('<a>', 'Open', '2026-12-09'), mail('<b>', 'Open', '2026-12-01')];
    expect(checkMail(reversed, changed, new Set())).toEqual([
      'order 8100001: email for Open/2026-12-01 arrived after the one for Open/2026-12-09, which S/4HANA took on ' +
        'later (Open/2026-12-01 → Open/2026-12-09)',
      'order 8100001 changed to Open/2026-12-01 → Open/2026-12-09: emails say Open/2026-12-09, Open/2026-12-01',
    ]);
  });
});

describe('phasesWithoutFailover', () => {
  const phase = (index: number, failovers: number, postgresRestarts = 0) => ({
    index,
    failovers,
    postgresRestarts,
  });

  it('accepts a run whose every phase had a failover that terminated sessions', () => {
    expect(phasesWithoutFailover([phase(0, 1), phase(1, 2), phase(2, 1, 1)])).toEqual([]);
  });

  it('names each phase whose failovers terminated nothing, however many the run had in all', () => {
    expect(phasesWithoutFailover([phase(0, 3), phase(1, 0), phase(2, 2), phase(3, 0)])).toEqual([
      'phase 1: no database failover terminated a session of the service',
      'phase 3: no database failover terminated a session of the service',
    ]);
  });

  it('excuses the phase that restarted PostgreSQL, whose failover may find no server', () => {
    expect(phasesWithoutFailover([phase(0, 1), phase(1, 0, 1)])).toEqual([]);
  });
});

describe('longestDelay', () => {
  it('measures from queueing to the first acceptance', () => {
    expect(longestDelay(new Map([[ID, [4000, 9000]]]), outbox)).toEqual({
      ms: 3000,
      messageId: ID,
      salesOrder: '8100001',
      claims: 3,
    });
  });
});
