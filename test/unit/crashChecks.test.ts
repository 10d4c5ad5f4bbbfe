// The crash suite's judge of resent emails: one resend per crash around the email's sends, no more.
import { describe, expect, it } from 'vitest';
import type { ReceivedMail } from '../../sandbox/smtpServer.js';
import { checkMail, checkResends, longestDelay } from '../crash/checks.js';

const ID = '<resent@fleet.example>';
const outbox = [
  { messageId: ID, salesOrder: '8100001', state: 'sent', attempts: 3, queuedAt: new Date(1000) },
];

function judge(receivedAt: number[], kills: number[]) {
  return checkResends(
    new Map([[ID, receivedAt]]),
    new Map(),
    new Map([[ID, 1]]),
    outbox,
    kills.map((at) => ({ at })),
    [],
  );
}

describe('checkResends', () => {
  it('accepts a resend for each kill around the earlier sends', () => {
    expect(judge([10_000, 20_000], [10_500]).findings).toEqual([]);
    expect(judge([10_000, 20_000, 30_000], [10_500, 20_500]).findings).toEqual([]);
  });

  it('reports an email resent twice around a single kill', () => {
    expect(judge([10_000, 10_200, 20_000], [10_500]).findings).toEqual([
      `email ${ID} (order 8100001) received 3 times: 2 resends but 1 crash(es) around its sends`,
    ]);
  });

  it('reports a resend that no kill or outage explains', () => {
    expect(judge([10_000, 20_000], [50_000]).findings).toEqual([
      `email ${ID} (order 8100001) received 2 times without a crash`,
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
