// Migration 0003 on a database that already notified orders and holds mail: threads continue from the oldest
// email kept, mail queued before it stays sendable, and a recipient's locale must look like a language tag.
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { createDatabase, type Database } from '../support/database.js';

const MIGRATIONS = new URL('../../db/migrations/', import.meta.url);

let database: Database;
let pool: pg.Pool;
let before: string;

beforeAll(async () => {
  database = await createDatabase('fon_migration');
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // The schema as it was before 0003: the migrations that sort before it.
  before = await mkdtemp(join(tmpdir(), 'fon-migrations-'));
  for (const name of (await readdir(MIGRATIONS)).filter((file) => file < '0003')) {
    await copyFile(new URL(name, MIGRATIONS), join(before, name));
  }
  await migrate(pool, pathToFileURL(`${before}/`));
  await pool.query(
    `insert into order_notification (sales_order, portal_status, requested_delivery_date)
     values ('M1', 'Delivered', '2026-12-15'), ('M2', 'Open', null)`,
  );
  await pool.query(
    `insert into mail_outbox (sales_order, portal_status, recipients, message_id, state)
     values ('M1', 'Open', '{a@example.com}', '<m1-first@example>', 'sent'),
            ('M1', 'Delivered', '{a@example.com}', '<m1-second@example>', 'pending')`,
  );
  await pool.query(
    `insert into mail_recipient (sold_to_party, recipients) values ('17100001', '{a@example.com}')`,
  );
  expect(await migrate(pool)).toContain('0003_mail_content.sql');
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
  if (before !== undefined) await rm(before, { recursive: true, force: true });
});

describe('migration 0003 on a database in use', () => {
  it("starts each notified order's thread at its oldest email kept, or at its next one", async () => {
    const { rows } = await pool.query(
      `select sales_order as "salesOrder", thread_message_id as "thread", previous_portal_status as "previous"
       from order_notification order by sales_order`,
    );
    expect(rows).toEqual([
      { salesOrder: 'M1', thread: '<m1-first@example>', previous: null },
      { salesOrder: 'M2', thread: null, previous: null },
    ]);
  });

  it('leaves mail queued before it without a change or locale, so it goes out stating the current pair', async () => {
    const { rows } = await pool.query(
      `select change, locale, in_reply_to as "inReplyTo", state from mail_outbox
       where message_id = '<m1-second@example>'`,
    );
    expect(rows).toEqual([{ change: null, locale: null, inReplyTo: null, state: 'pending' }]);
  });

  it('keeps existing recipients on MAIL_LOCALE and refuses a locale that is no language tag', async () => {
    const { rows } = await pool.query(`select locale from mail_recipient where sold_to_party = '17100001'`);
    expect(rows).toEqual([{ locale: null }]);
    await pool.query(`update mail_recipient set locale = 'de-AT' where sold_to_party = '17100001'`);
    await expect(
      pool.query(`update mail_recipient set locale = 'de; drop table x' where sold_to_party = '17100001'`),
    ).rejects.toMatchObject({ code: '23514' });
  });
});
