// Migration 0016 on a database filled by the schema before it: every row of the shared tables, of both families
// and of none, is carried over to `family`, `key` and content, and what each family's rows hold is what its
// email, its portal PUT and its timeline render.
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { FAMILY_ADMINS, mailKinds, PUSH_KINDS } from '../../src/families/index.js';
import { applyEffect } from '../../src/families/salesOrder/effect.js';
import type { PortalOrder } from '../../src/families/salesOrder/state.js';
import { mailKindOf } from '../../src/notifications/mailKind.js';
import { type ClaimedMail, claimDue } from '../../src/notifications/mailOutbox.js';
import { pushKindOf } from '../../src/portal/pushKind.js';
import type { ClaimedPush } from '../../src/portal/pushOutbox.js';
import { createDatabase, type Database } from '../support/database.js';
import { EFFECT_MAIL, parsedEvent } from '../support/effects.js';

const MIGRATIONS = new URL('../../db/migrations/', import.meta.url);
const SOURCE = '/default/sap.s4.beh/244572008';
const ORDER_TYPE = 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1';
const RETURN_TYPE = 'sap.s4.beh.customerreturn.v1.CustomerReturn.Changed.v1';
const OTHER_TYPE = 'sap.s4.beh.businesspartner.v1.BusinessPartner.Changed.v1';
const CHANGED_AT = '2026-03-01T08:00:00.123Z';
const TABLES = [
  'processed_event',
  'duplicate_arrival',
  'event_attempt',
  'dead_letter',
  'mail_outbox',
  'portal_push',
];

let database: Database;
let pool: pg.Pool;
let before: string;
let countsBefore: Record<string, number>;

async function counts(): Promise<Record<string, number>> {
  const entries = await Promise.all(
    TABLES.map(async (table) => {
      const { rows } = await pool.query<{ n: number }>(`select count(*)::int as "n" from ${table}`);
      return [table, rows[0]?.n ?? 0] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/** Rows as the schema up to 0015 held them: both families, an event of none, every state of both outboxes. */
async function fillTheOldSchema(): Promise<void> {
  await pool.query(
    `insert into processed_event (source, id, type, sales_order, customer_return, outcome, payload_hash, channel,
       received_at, attempts, read_portal_status, read_requested_delivery_date, read_changed_at, read_case_status,
       notification)
     values ($1, 'order-applied', $2, '1000001', null, 'applied', 'h1', 'amqp', now(), 1, 'Delivered', '2026-12-15',
             $5::timestamptz, null, 'changed'),
            ($1, 'order-stale-no-date', $2, '1000001', null, 'stale', 'h2', 'webhook', now(), 2, 'Open', null, null,
             null, null),
            ($1, 'order-not-found', $2, '1000002', null, 'not_found', 'h3', 'amqp', now(), 1, null, null, null, null,
             null),
            ($1, 'return-applied', $3, null, '60000001', 'applied', 'h4', 'amqp', now(), 1, null, null,
             $5::timestamptz, 'Open', 'new'),
            ($1, 'return-not-case', $3, null, '60000002', 'not_warranty_case', 'h5', 'amqp', now(), 1, null, null,
             null, 'Open', null),
            ($1, 'other-ignored', $4, null, null, 'ignored', 'h6', 'amqp', now(), 1, null, null, null, null, null)`,
    [SOURCE, ORDER_TYPE, RETURN_TYPE, OTHER_TYPE, CHANGED_AT],
  );
  // A record from before 0010: no channel, no read.
  await pool.query(
    `insert into processed_event (source, id, type, sales_order, outcome, payload_hash)
     values ($1, 'order-old', $2, '1000001', 'applied', 'h7')`,
    [SOURCE, ORDER_TYPE],
  );
  await pool.query(
    `insert into duplicate_arrival (source, id, channel)
     values ($1, 'order-applied', 'webhook'), ($1, 'return-applied', 'amqp')`,
    [SOURCE],
  );
  await pool.query(
    `insert into event_attempt (source, id, attempts, last_error, channel, sales_order, customer_return)
     values ($1, 'order-released', 2, 'S/4HANA answered 503', 'amqp', '1000003', null),
            ($1, 'return-released', 1, null, 'webhook', null, '60000003'),
            ($1, 'other-counted', 1, null, 'amqp', null, null)`,
    [SOURCE],
  );
  await pool.query(
    `insert into dead_letter (channel, reason, source, event_id, payload_hash, body, sales_order, customer_return)
     values ('amqp', 'conflict: order', $1, 'order-refused', 'h8', '\\x7b7d', '1000004', null),
            ('webhook', 'conflict: return', $1, 'return-refused', 'h9', '\\x7b7d', null, '60000004'),
            ('amqp', 'not an event', null, null, null, '\\x00', null, null)`,
    [SOURCE],
  );
  await pool.query(
    `insert into mail_outbox (kind, sales_order, portal_status, requested_delivery_date, sold_to_party,
       customer_reference, recipients, message_id, state, change, previous_portal_status,
       previous_requested_delivery_date, locale, in_reply_to, sent_at, last_error)
     values ('order', '1000001', 'Delivered', '2026-12-15', '17100001', 'PO-1', '{a@fleet.example}', '<o1@x>',
             'sent', 'changed', 'InProcess', '2026-12-01', 'de', '<o0@x>', now(), null),
            ('order', '1000002', 'Open', null, null, null, '{a@fleet.example}', '<o2@x>', 'parked', null, null,
             null, null, null, null, '550 refused')`,
  );
  await pool.query(
    `insert into mail_outbox (kind, customer_return, case_status, previous_case_status, case_sales_order,
       return_reasons, sold_to_party, customer_reference, recipients, message_id, state, change, locale,
       in_reply_to, last_error)
     values ('warranty_case', '60000001', 'InProcess', 'Open', '1000001', '{003,103}', '17100001', 'RMA-1',
             '{a@fleet.example}', '<c1@x>', 'pending', 'changed', 'en', '<c0@x>', null),
            ('warranty_case', '60000002', 'Open', null, null, '{}', null, null, '{a@fleet.example}', '<c2@x>',
             'parked', 'new', null, null, '550 refused')`,
  );
  await pool.query(
    `insert into portal_push (kind, sales_order, portal_status, requested_delivery_date, sold_to_party,
       customer_reference, s4_changed_at, push_id, state, result, claims, pushed_portal_status,
       pushed_requested_delivery_date, pushed_sold_to_party, pushed_customer_reference, pushed_claim, last_error)
     values ('order', '1000001', 'Delivered', '2026-12-15', '17100001', 'PO-1', $1::timestamptz,
             '6f1f0f6e-8d5a-4c1e-9a53-0d3f8c2b7a10', 'done', 'pushed', 3, 'Delivered', '2026-12-15', '17100001',
             'PO-1', 3, null),
            ('order', '1000002', 'Open', null, null, null, null, '6f1f0f6e-8d5a-4c1e-9a53-0d3f8c2b7a11', 'parked',
             null, 1, null, null, null, null, null, 'portal answered 400')`,
    [CHANGED_AT],
  );
  await pool.query(
    `insert into portal_push (kind, customer_return, case_status, case_sales_order, return_reasons, sold_to_party,
       customer_reference, s4_changed_at, push_id, state, result, claims, last_error)
     values ('warranty_case', '1000001', 'Open', '1000001', '{003}', '17100001', 'RMA-1', $1::timestamptz,
             '0b6c2f4e-3a1d-4e8b-9c7f-5d2e1a0b9c80', 'parked', null, 1, 'portal answered 400'),
            ('warranty_case', '60000002', 'Withdrawn', null, '{}', null, null, null,
             '0b6c2f4e-3a1d-4e8b-9c7f-5d2e1a0b9c81', 'done', 'pushed', 1, null)`,
    [CHANGED_AT],
  );
}

beforeAll(async () => {
  database = await createDatabase('fon_migration');
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // The schema as it was before 0016: the migrations that sort before it.
  before = await mkdtemp(join(tmpdir(), 'fon-migrations-'));
  for (const name of (await readdir(MIGRATIONS)).filter((file) => file < '0016')) {
    await copyFile(new URL(name, MIGRATIONS), join(before, name));
  }
  await migrate(pool, pathToFileURL(`${before}/`));
  await fillTheOldSchema();
  countsBefore = await counts();
  expect(await migrate(pool)).toContain('0016_family_key.sql');
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
  if (before !== undefined) await rm(before, { recursive: true, force: true });
});

describe('migration 0016 on a database in use', () => {
  it('loses no row of any shared table', async () => {
    expect(await counts()).toEqual(countsBefore);
  });

  it("names each processed event's document and keeps what its read saw as its family's timeline renders it", async () => {
    const { rows } = await pool.query(
      `select id, family, key, read, outcome, notification from processed_event order by id`,
    );
    expect(rows).toEqual([
      {
        id: 'order-applied',
        family: 'salesOrder',
        key: '1000001',
        outcome: 'applied',
        notification: 'changed',
        read: { portalStatus: 'Delivered', requestedDeliveryDate: '2026-12-15', changedAt: CHANGED_AT },
      },
      {
        id: 'order-not-found',
        family: 'salesOrder',
        key: '1000002',
        outcome: 'not_found',
        notification: null,
        read: null,
      },
      {
        id: 'order-old',
        family: 'salesOrder',
        key: '1000001',
        outcome: 'applied',
        notification: null,
        read: null,
      },
      {
        id: 'order-stale-no-date',
        family: 'salesOrder',
        key: '1000001',
        outcome: 'stale',
        notification: null,
        read: { portalStatus: 'Open', requestedDeliveryDate: null, changedAt: null },
      },
      { id: 'other-ignored', family: null, key: null, outcome: 'ignored', notification: null, read: null },
      {
        id: 'return-applied',
        family: 'customerReturn',
        key: '60000001',
        outcome: 'applied',
        notification: 'new',
        read: { caseStatus: 'Open', changedAt: CHANGED_AT },
      },
      {
        id: 'return-not-case',
        family: 'customerReturn',
        key: '60000002',
        outcome: 'not_warranty_case',
        notification: null,
        read: { caseStatus: 'Open', changedAt: null },
      },
    ]);
    const timeline = (family: string) =>
      FAMILY_ADMINS.find((admin) => admin.timeline.family === family)?.timeline;
    expect(timeline('salesOrder')?.read(rows[0].read)).toEqual({
      portalStatus: 'Delivered',
      requestedDeliveryDate: '2026-12-15',
      lastChangeDateTime: new Date(CHANGED_AT),
    });
    expect(timeline('customerReturn')?.read(rows[5].read)).toEqual({
      caseStatus: 'Open',
      lastChangeDateTime: new Date(CHANGED_AT),
    });
  });

  it('names the document of each delivery count and dead letter, and none where the event named none', async () => {
    const { rows: attempts } = await pool.query(
      `select id, family, key, attempts, last_error as "lastError", channel from event_attempt order by id`,
    );
    expect(attempts).toEqual([
      {
        id: 'order-released',
        family: 'salesOrder',
        key: '1000003',
        attempts: 2,
        lastError: 'S/4HANA answered 503',
        channel: 'amqp',
      },
      { id: 'other-counted', family: null, key: null, attempts: 1, lastError: null, channel: 'amqp' },
      {
        id: 'return-released',
        family: 'customerReturn',
        key: '60000003',
        attempts: 1,
        lastError: null,
        channel: 'webhook',
      },
    ]);
    const { rows: letters } = await pool.query(
      `select reason, event_id as "eventId", family, key from dead_letter order by id`,
    );
    expect(letters).toEqual([
      { reason: 'conflict: order', eventId: 'order-refused', family: 'salesOrder', key: '1000004' },
      { reason: 'conflict: return', eventId: 'return-refused', family: 'customerReturn', key: '60000004' },
      { reason: 'not an event', eventId: null, family: null, key: null },
    ]);
  });

  it('carries every email over to its family, key and content, parked and sent alike, and each renders', async () => {
    const { rows } = await pool.query<ClaimedMail & { state: string; lastError: string | null }>(
      `select id::text as "id", family, key, content, recipients, message_id as "messageId", attempts, change,
              locale, in_reply_to as "inReplyTo", trace_parent as "traceParent", false as "nextPending", state,
              last_error as "lastError"
       from mail_outbox order by message_id`,
    );
    expect(
      rows.map(({ family, key, content, state, change, lastError }) => ({
        family,
        key,
        content,
        state,
        change,
        lastError,
      })),
    ).toEqual([
      {
        family: 'customerReturn',
        key: '60000001',
        state: 'pending',
        change: 'changed',
        lastError: null,
        content: {
          caseStatus: 'InProcess',
          previousCaseStatus: 'Open',
          salesOrder: '1000001',
          returnReasons: ['003', '103'],
          soldToParty: '17100001',
          customerReference: 'RMA-1',
        },
      },
      {
        family: 'customerReturn',
        key: '60000002',
        state: 'parked',
        change: 'new',
        lastError: '550 refused',
        content: {
          caseStatus: 'Open',
          previousCaseStatus: null,
          salesOrder: null,
          returnReasons: [],
          soldToParty: null,
          customerReference: null,
        },
      },
      {
        family: 'salesOrder',
        key: '1000001',
        state: 'sent',
        change: 'changed',
        lastError: null,
        content: {
          portalStatus: 'Delivered',
          requestedDeliveryDate: '2026-12-15',
          previousPortalStatus: 'InProcess',
          previousRequestedDeliveryDate: '2026-12-01',
          soldToParty: '17100001',
          customerReference: 'PO-1',
        },
      },
      {
        family: 'salesOrder',
        key: '1000002',
        state: 'parked',
        change: null,
        lastError: '550 refused',
        content: {
          portalStatus: 'Open',
          requestedDeliveryDate: null,
          previousPortalStatus: null,
          previousRequestedDeliveryDate: null,
          soldToParty: null,
          customerReference: null,
        },
      },
    ]);
    const settings = { from: 'notifier@fleet.example', locale: 'en' };
    const kinds = mailKinds({
      salesOrder: { portalOrderUrl: undefined },
      customerReturn: { warrantyReturnReasons: undefined },
    });
    const subjects = rows.map((mail) => mailKindOf(kinds, mail.family)?.render(mail, settings).subject);
    expect(subjects).toEqual([
      expect.stringContaining('60000001'),
      expect.stringContaining('60000002'),
      expect.stringContaining('1000001'),
      expect.stringContaining('1000002'),
    ]);
    const order = mailKindOf(kinds, 'salesOrder')?.render(rows[2] as ClaimedMail, settings);
    expect(order?.headers).toMatchObject({
      'X-Portal-Status': 'Delivered',
      'X-Requested-Delivery-Date': '2026-12-15',
    });
    expect(order?.inReplyTo).toBe('<o0@x>');
  });

  it('carries every push over to the PUT its family sends, and what the portal holds of an order', async () => {
    const { rows } = await pool.query<
      ClaimedPush & { state: string; pushedContent: unknown; pushedClaim: number }
    >(
      `select family, key, content, push_id::text as "pushId", attempts, claims, state,
              pushed_content as "pushedContent", pushed_claim as "pushedClaim"
       from portal_push order by family, key`,
    );
    const requests = rows.map((push) => pushKindOf(PUSH_KINDS, push.family)?.request(push));
    expect(requests).toEqual([
      {
        path: '/warranty-cases/1000001',
        body: {
          customerReturn: '1000001',
          caseStatus: 'Open',
          soldToParty: '17100001',
          customerReference: 'RMA-1',
          salesOrder: '1000001',
          returnReasons: ['003'],
          s4ChangedAt: CHANGED_AT,
        },
      },
      {
        path: '/warranty-cases/60000002',
        body: {
          customerReturn: '60000002',
          caseStatus: 'Withdrawn',
          soldToParty: null,
          customerReference: null,
          salesOrder: null,
          returnReasons: [],
          s4ChangedAt: null,
        },
      },
      {
        path: '/orders/1000001',
        body: {
          salesOrder: '1000001',
          portalStatus: 'Delivered',
          requestedDeliveryDate: '2026-12-15',
          soldToParty: '17100001',
          customerReference: 'PO-1',
          s4ChangedAt: CHANGED_AT,
        },
      },
      {
        path: '/orders/1000002',
        body: {
          salesOrder: '1000002',
          portalStatus: 'Open',
          requestedDeliveryDate: null,
          soldToParty: null,
          customerReference: null,
          s4ChangedAt: null,
        },
      },
    ]);
    expect(
      rows.map(({ key, state, pushId, pushedContent, pushedClaim }) => ({
        key,
        state,
        pushId,
        pushedContent,
        pushedClaim,
      })),
    ).toEqual([
      {
        key: '1000001',
        state: 'parked',
        pushId: '0b6c2f4e-3a1d-4e8b-9c7f-5d2e1a0b9c80',
        pushedContent: null,
        pushedClaim: null,
      },
      {
        key: '60000002',
        state: 'done',
        pushId: '0b6c2f4e-3a1d-4e8b-9c7f-5d2e1a0b9c81',
        pushedContent: null,
        pushedClaim: null,
      },
      {
        key: '1000001',
        state: 'done',
        pushId: '6f1f0f6e-8d5a-4c1e-9a53-0d3f8c2b7a10',
        pushedClaim: 3,
        pushedContent: {
          salesOrder: '1000001',
          portalStatus: 'Delivered',
          requestedDeliveryDate: '2026-12-15',
          soldToParty: '17100001',
          customerReference: 'PO-1',
        },
      },
      {
        key: '1000002',
        state: 'parked',
        pushId: '6f1f0f6e-8d5a-4c1e-9a53-0d3f8c2b7a11',
        pushedContent: null,
        pushedClaim: null,
      },
    ]);
  });

  it('claims a pending email carried over, as the sender will', async () => {
    const claimed = await claimDue(pool, 10, 15);
    expect(claimed.map(({ family, key, messageId }) => ({ family, key, messageId }))).toEqual([
      { family: 'customerReturn', key: '60000001', messageId: '<c1@x>' },
    ]);
  });

  it("compares an order's next state with the state the portal was known to hold", async () => {
    const held: PortalOrder = {
      salesOrder: '1000001',
      portalStatus: 'Delivered',
      requestedDeliveryDate: '2026-12-15',
      soldToParty: '17100001',
      customerReference: 'PO-1',
      changedAt: new Date('2026-03-02T08:00:00Z'),
      readAt: new Date(),
    };
    const apply = (id: string, order: PortalOrder) =>
      applyEffect(pool, [parsedEvent({ salesOrder: order.salesOrder, id })], order, EFFECT_MAIL, true);
    // The values the portal holds (a later S/4HANA change time alone is no change to push).
    expect(await apply('after-1', held)).toMatchObject({ result: 'applied', pushQueued: false });
    expect(
      await apply('after-2', { ...held, portalStatus: 'InProcess', changedAt: new Date('2026-03-03') }),
    ).toMatchObject({ result: 'applied', pushQueued: true });
    const { rows } = await pool.query(
      `select state, content->>'portalStatus' as "status" from portal_push where family = 'salesOrder' and key = '1000001'`,
    );
    expect(rows).toEqual([{ state: 'pending', status: 'InProcess' }]);
  });

  it('keeps an order and a return of the same number apart', async () => {
    // The case pushed above has the key 1000001, as the order has: one row each, by family.
    const { rows } = await pool.query(`select family from portal_push where key = '1000001' order by family`);
    expect(rows).toEqual([{ family: 'customerReturn' }, { family: 'salesOrder' }]);
  });
});
