// The crash suite's judge of resent emails: one resend per crash around the email's sends, no more.
import { describe, expect, it } from 'vitest';
import { checkResends } from '../crash/checks.js';

const ID = '<resent@fleet.example>';
const outbox = [{ messageId: ID, salesOrder: '8100001', state: 'sent', attempts: 3 }];

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
