import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/loadConfig.js';
import { parseDuration } from '../../src/config/reconcileConfig.js';

const local = {
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  INGEST: 'webhook',
  SMTP_URL: 'smtp://127.0.0.1:2525',
  MAIL_TO: 'a@example.com',
  AUTH: 'none',
};
const SOURCE = '/default/sap.s4.beh/S4HCLNT100';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('reconciliation settings', () => {
  it('are off without S4_SOURCE', () => {
    expect(loadConfig(local).reconcile).toBeUndefined();
  });

  it('default to a 5 minute interval, 15 minutes of overlap, 2 minutes to settle and 200 documents a page', () => {
    expect(loadConfig({ ...local, S4_SOURCE: SOURCE }).reconcile).toEqual({
      source: SOURCE,
      intervalMs: 300_000,
      overlapMs: 900_000,
      settleMs: 120_000,
      pageSize: 200,
    });
  });

  it('read durations in seconds, minutes and hours, and "off" as no interval', () => {
    const reconcile = loadConfig({
      ...local,
      S4_SOURCE: SOURCE,
      RECONCILE_INTERVAL: 'off',
      RECONCILE_OVERLAP: '1h',
      RECONCILE_SETTLE: '30s',
      RECONCILE_PAGE_SIZE: '1000',
    }).reconcile;
    expect(reconcile).toMatchObject({
      intervalMs: undefined,
      overlapMs: 3_600_000,
      settleMs: 30_000,
      pageSize: 1000,
    });
  });

  it('report every bad value at once, with or without S4_SOURCE', () => {
    expect(
      problemsOf({
        ...local,
        RECONCILE_INTERVAL: '5 min',
        RECONCILE_OVERLAP: '-15m',
        RECONCILE_SETTLE: '2d',
        RECONCILE_PAGE_SIZE: '1001',
      }),
    ).toEqual([
      'RECONCILE_INTERVAL takes a duration such as 30s, 5m or 1h, at most 24h, got "5 min"',
      'RECONCILE_OVERLAP takes a duration such as 30s, 5m or 1h, at most 24h, got "-15m"',
      'RECONCILE_SETTLE takes a duration such as 30s, 5m or 1h, at most 24h, got "2d"',
      'RECONCILE_PAGE_SIZE must be an integer from 1 to 1000, got "1001"',
    ]);
  });

  it('refuse an interval of zero and a duration beyond a day', () => {
    expect(
      problemsOf({ ...local, S4_SOURCE: SOURCE, RECONCILE_INTERVAL: '0s', RECONCILE_OVERLAP: '25h' }),
    ).toEqual([
      'RECONCILE_INTERVAL must be longer than 0s; "off" turns it off',
      'RECONCILE_OVERLAP takes a duration such as 30s, 5m or 1h, at most 24h, got "25h"',
    ]);
  });

  it('parse only a whole number with one unit', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    for (const wrong of ['5', '5M', '1.5h', ' 5m', '5ms', 'off', ''])
      expect(parseDuration(wrong)).toBeUndefined();
  });
});
