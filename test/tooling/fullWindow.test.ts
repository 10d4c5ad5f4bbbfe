// The benchmark's full retention window (bench/fullWindow.ts), seeded at a small scale into a migrated database:
// every row the scale asks for, valid under the tables' constraints, all of it settled work (processed, sent,
// pushed), and none of it old enough for the service's own retention pass to delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_SEEDED_ORDER, SEEDED_SOURCE, seedFullWindow } from '../../bench/fullWindow.js';
import { FAMILY_EXPIRIES } from '../../src/families/index.js';
import { createRetention } from '../../src/maintenance/retention.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const SIZE = { processedEvents: 1_000, sentMails: 200, orders: 100 };

describe('the full retention window of the benchmark', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await seedFullWindow(db.pool, SIZE);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const count = async (sql: string) => (await db.pool.query<{ n: number }>(sql)).rows[0]?.n;

  it('holds the processed events with their attempts, the sent emails and each order’s portal rows', async () => {
    expect(
      await count(
        `select count(*)::int as "n" from processed_event
         where source = '${SEEDED_SOURCE}' and attempts = 1 and outcome = 'applied'`,
      ),
    ).toBe(SIZE.processedEvents);
    expect(
      await count(`select count(distinct key)::int as "n" from processed_event where family = 'salesOrder'`),
    ).toBe(SIZE.orders);
    expect(await count(`select count(*)::int as "n" from mail_outbox where state = 'sent'`)).toBe(
      SIZE.sentMails,
    );
    expect(await count('select count(*)::int as "n" from mail_outbox')).toBe(SIZE.sentMails);
    for (const table of ['portal_order_status', 'order_notification']) {
      expect(await count(`select count(*)::int as "n" from ${table}`), table).toBe(SIZE.orders);
    }
    expect(await count(`select count(*)::int as "n" from portal_push where state = 'done'`)).toBe(
      SIZE.orders,
    );
    expect(await count(`select min(sales_order::bigint)::int as "n" from portal_order_status`)).toBe(
      FIRST_SEEDED_ORDER,
    );
  });

  it('is inside the retention windows: the service’s retention pass deletes none of it', async () => {
    const retention = createRetention({
      pool: db.pool,
      logger: createLogger('silent'),
      processedEventDays: 7,
      mailDays: 30,
      expiries: FAMILY_EXPIRIES,
    });
    const report = await retention.runOnce();
    expect(report.ran).toBe(true);
    expect(Object.values(report.deleted).every((n) => n === 0)).toBe(true);
    expect(await count('select count(*)::int as "n" from processed_event')).toBe(SIZE.processedEvents);
    expect(await count('select count(*)::int as "n" from mail_outbox')).toBe(SIZE.sentMails);
  });

  it('leaves the tables analyzed, as autovacuum would have after a week', async () => {
    const { rows } = await db.pool.query<{ relname: string }>(
      `select relname from pg_stat_user_tables where last_analyze is null and relname = any($1::text[])`,
      [['processed_event', 'mail_outbox', 'portal_order_status', 'order_notification', 'portal_push']],
    );
    expect(rows).toEqual([]);
  });
});
