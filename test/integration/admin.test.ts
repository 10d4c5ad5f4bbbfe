// The admin API on the real PostgreSQL, with real XSUAA token validation (a local key endpoint), state made by
// real events through the real handler against the S/4HANA stand-in, and mail really sent to an SMTP sink.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryEvent, customerReturnEvent, S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { InboundMessage } from '../../src/events/cloudEvent.js';
import type { Handled } from '../../src/events/handleEvent.js';
import type { ServiceParts } from '../../src/service/buildService.js';
import { adminCalls } from '../support/adminCalls.js';
import { buildTestService } from '../support/harness.js';
import { ANN, BEN } from '../support/operators.js';
import { orderMaker } from '../support/orders.js';
import { returnState } from '../support/returns.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';
import { startXsuaaStub, type XsuaaStub, xsuaaEnv } from '../support/xsuaa.js';

const MAX_DELIVERIES = 2;

const world = useWorld();
let stub: XsuaaStub;
let service: ServiceParts;
const appLogs: string[] = [];

beforeAll(async () => {
  stub = await startXsuaaStub();
  service = await buildTestService({
    ...world.endpoints(),
    env: {
      MAX_DELIVERIES: String(MAX_DELIVERIES),
      LOG_LEVEL: 'info',
      // Real token validation: the bound xsuaa service is the local key endpoint.
      ...xsuaaEnv(stub),
    },
    retryPolicy: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    // Polls only once a minute: mail that goes out within the test's patience went because it was woken.
    mailPollMs: 60_000,
    logLines: appLogs,
  });
  service.mailSender.start();
});

afterAll(async () => {
  await service.stop();
  await stub.close();
});

const { viewer, admin, userViewer, userAdmin, call } = adminCalls(
  () => service.app,
  () => stub,
);

const { newOrder } = orderMaker(() => world.s4, 5_000_000);

/** Delivers one message as a transport adapter does: the handler decides, and stores a reject as a dead letter. */
async function deliver(
  message: Partial<InboundMessage> & { body: Buffer },
): Promise<Handled & { letter?: string }> {
  const inbound: InboundMessage = { contentType: 'application/json', binaryAttributes: {}, ...message };
  const handled = await service.handle(inbound, { channel: 'amqp' });
  return { ...handled, letter: handled.deadLetterId ?? undefined };
}

const json = (text: string) => Buffer.from(text, 'utf8');

async function mailRow(salesOrder: string) {
  const { rows } = await world.db.pool.query(
    `select id::text as "id", state, attempts, message_id as "messageId" from mail_outbox
     where family = 'salesOrder' and key = $1`,
    [salesOrder],
  );
  return rows[0];
}

async function insertMail(salesOrder: string, state: string, lastError: string | null, createdAt: string) {
  const { rows } = await world.db.pool.query<{ id: string }>(
    `insert into mail_outbox (family, key, content, recipients, message_id, state, attempts, last_error,
                              created_at, next_attempt_at, sent_at)
     values ('salesOrder', $1, '{"portalStatus": "Open"}', '{fleet-manager@fleet.example}', $2, $3, 1, $4, $5::timestamptz,
             now() + interval '1 hour', case when $3 = 'sent' then now() end)
     returning id::text as "id"`,
    [salesOrder, `<${randomBytes(8).toString('hex')}@fleet.example>`, state, lastError, createdAt],
  );
  return rows[0]?.id as string;
}

describe('admin API access', () => {
  it('answers 401 without a token and with a token that does not validate', async () => {
    expect((await call('GET', '/api/summary')).statusCode).toBe(401);
    expect((await call('GET', '/api/summary', 'not-a-jwt')).statusCode).toBe(401);
    expect(
      (await call('GET', '/api/summary', stub.token({ scopes: ['Viewer'], tamper: true }))).statusCode,
    ).toBe(401);
    expect((await call('POST', '/api/dead-letters/1/replay')).statusCode).toBe(401);
    // Authentication comes first: a malformed parameter is not even looked at.
    expect((await call('GET', '/api/orders/not-a-key')).statusCode).toBe(401);
  });

  it('answers 403 to a Viewer on an action and to a token without scopes on a read, changing nothing', async () => {
    const salesOrder = newOrder();
    const id = await insertMail(salesOrder, 'parked', '550 refused', '2026-01-01T00:00:00Z');

    const retry = await call('POST', `/api/mail/${id}/retry`, viewer());
    expect(retry.statusCode).toBe(403);
    expect(retry.json()).toEqual({ error: 'forbidden', message: 'missing scope Admin' });
    expect((await mailRow(salesOrder))?.state).toBe('parked');

    const read = await call('GET', '/api/summary', stub.token({ scopes: [] }));
    expect(read.statusCode).toBe(403);
    expect(read.json()).toEqual({ error: 'forbidden', message: 'missing scope Viewer' });
  });
});

describe('portal pushes through the admin API', () => {
  it('lists a parked push to a Viewer and puts it back in line only for an Admin, with the same Idempotency-Key', async () => {
    const salesOrder = newOrder();
    const pushId = '6f1f0f6e-8d5a-4c1e-9a53-0d3f8c2b7a10';
    await world.db.pool.query(
      `insert into portal_push (family, key, content, push_id, state, attempts, last_error)
       values ('salesOrder', $1, jsonb_build_object('salesOrder', $1::text, 'portalStatus', 'Open'), $2::uuid,
               'parked', 1, 'portal answered 400: bad field')`,
      [salesOrder, pushId],
    );
    expect((await call('GET', '/api/portal-pushes', stub.token({ scopes: [] }))).statusCode).toBe(403);
    const listed = (await call('GET', '/api/portal-pushes', viewer())).json();
    expect(listed.items).toContainEqual(
      expect.objectContaining({
        family: 'salesOrder',
        key: salesOrder,
        content: { salesOrder, portalStatus: 'Open' },
        lookup: `orders/${salesOrder}`,
        retry: `portal-pushes/${salesOrder}/retry`,
        state: 'parked',
        pushId,
        lastError: 'portal answered 400: bad field',
      }),
    );

    const refused = await call('POST', `/api/portal-pushes/${salesOrder}/retry`, viewer());
    expect(refused.statusCode).toBe(403);
    const state = async () =>
      (await world.db.pool.query(`select state from portal_push where key = $1`, [salesOrder])).rows[0]
        ?.state;
    expect(await state()).toBe('parked');

    const retried = await call('POST', `/api/portal-pushes/${salesOrder}/retry`, admin());
    expect(retried.statusCode).toBe(200);
    expect(retried.json()).toEqual({ salesOrder, state: 'pending', pushId });
    expect(await state()).toBe('pending');
    expect((await call('POST', '/api/portal-pushes/4242424242/retry', admin())).statusCode).toBe(404);
    expect((await call('POST', "/api/portal-pushes/not'a-key/retry", admin())).statusCode).toBe(400);
  });

  it('puts a parked warranty-case push back in line for an Admin, with the same Idempotency-Key', async () => {
    const customerReturn = '64000002';
    const pushId = '0b6c2f4e-3a1d-4e8b-9c7f-5d2e1a0b9c8d';
    await world.db.pool.query(
      `insert into portal_push (family, key, content, push_id, state, attempts, last_error)
       values ('customerReturn', $1, jsonb_build_object('customerReturn', $1::text, 'caseStatus', 'Open',
                 'salesOrder', '1000473'), $2::uuid, 'parked', 1, 'portal answered 400: bad field')`,
      [customerReturn, pushId],
    );
    const url = `/api/portal-pushes/warranty-cases/${customerReturn}/retry`;
    // Listed by its own key, whatever order the return refers to, with the retry of exactly this row.
    const listed = (await call('GET', '/api/portal-pushes?limit=200', viewer())).json();
    expect(listed.items).toContainEqual(
      expect.objectContaining({
        family: 'customerReturn',
        key: customerReturn,
        lookup: `returns/${customerReturn}`,
        retry: url.slice('/api/'.length),
      }),
    );
    expect((await call('POST', url, viewer())).statusCode).toBe(403);
    const retried = await call('POST', url, admin());
    expect(retried.statusCode).toBe(200);
    expect(retried.json()).toEqual({ customerReturn, state: 'pending', pushId });
    const { rows } = await world.db.pool.query(
      `select state, attempts from portal_push where family = 'customerReturn' and key = $1`,
      [customerReturn],
    );
    expect(rows).toEqual([{ state: 'pending', attempts: 0 }]);
    const unknown = '/api/portal-pushes/warranty-cases/4242424242/retry';
    expect((await call('POST', unknown, admin())).statusCode).toBe(404);
  });
});

describe('reading what the service did', () => {
  it('shows the portal row, the notified pair, the mail history and the processed events of an order', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'B' });
    const first = await deliver({ body: json(salesOrderEvent({ salesOrder })) });
    await deliver({
      body: json(salesOrderEvent({ salesOrder, type: 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1' })),
    });
    const [mail] = await eventually('the mail', async () => {
      const sent = world.smtp.messages.filter((m) => m.headers['x-sales-order'] === salesOrder);
      return sent.length === 1 && (await mailRow(salesOrder))?.state === 'sent' ? sent : undefined;
    });

    const res = await call('GET', `/api/orders/${salesOrder}`, viewer());
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.portal).toMatchObject({
      portalStatus: 'PartiallyDelivered',
      requestedDeliveryDate: '2026-12-15',
      soldToParty: '17100001',
      customerReference: 'PO-4711',
    });
    expect(body.notification).toMatchObject({
      portalStatus: 'PartiallyDelivered',
      requestedDeliveryDate: '2026-12-15',
      threadMessageId: mail?.messageId,
    });
    expect(body.mails).toEqual([
      expect.objectContaining({
        portalStatus: 'PartiallyDelivered',
        requestedDeliveryDate: '2026-12-15',
        state: 'sent',
        attempts: 1,
        lastError: null,
        messageId: mail?.messageId,
        sentAt: expect.any(String),
        // What the email said: the order's first, in English, starting its thread.
        change: 'new',
        previousPortalStatus: null,
        locale: 'en',
        inReplyTo: null,
      }),
    ]);
    expect(body.mails[0]).not.toHaveProperty('recipients');
    expect(body.events).toHaveLength(2);
    expect(body.events).toContainEqual(
      expect.objectContaining({ source: S4_SOURCE, id: first.event?.id, outcome: 'applied' }),
    );
  });

  it('answers 404 for an order nothing is known about and 400 for a key the parser would refuse', async () => {
    expect((await call('GET', '/api/orders/4242424242', viewer())).statusCode).toBe(404);
    for (const key of ['ab-c', '12345678901', encodeURIComponent("1')")]) {
      expect((await call('GET', `/api/orders/${key}`, viewer())).statusCode).toBe(400);
    }
  });

  it('returns what is known about a customer return to a Viewer: its case, its emails and its events', async () => {
    const customerReturn = '64000001';
    world.s4.returns.setReturn(returnState(customerReturn, { overallSDProcessStatus: 'B' }));
    const created = await deliver({ body: json(customerReturnEvent(customerReturn, 'Created')) });
    await deliver({ body: json(customerReturnEvent(customerReturn, 'ItemChanged')) });
    const [mail] = await eventually('the case email', async () => {
      const sent = world.smtp.messages.filter((m) => m.headers['x-customer-return'] === customerReturn);
      return sent.length === 1 ? sent : undefined;
    });

    expect((await call('GET', `/api/returns/${customerReturn}`)).statusCode).toBe(401);
    // The key as an event may carry it, with leading zeros, names the same return.
    const res = await call('GET', `/api/returns/00${customerReturn}`, viewer());
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.customerReturn).toBe(customerReturn);
    expect(body.cases).toEqual([
      expect.objectContaining({
        sourceSystem: S4_SOURCE,
        caseStatus: 'InProcess',
        salesOrder: '1000473',
        returnReasons: ['009', '103'],
        notifiedCaseStatus: 'InProcess',
        threadMessageId: mail?.messageId,
      }),
    ]);
    expect(body.mails).toEqual([
      expect.objectContaining({ caseStatus: 'InProcess', change: 'new', messageId: mail?.messageId }),
    ]);
    expect(body.mails[0]).not.toHaveProperty('recipients');
    expect(body.events).toHaveLength(2);
    expect(body.events).toContainEqual(
      expect.objectContaining({ id: created.event?.id, outcome: 'applied', notification: 'new' }),
    );
  });

  it('shows a return deleted before any case was opened by its events alone, with no case', async () => {
    // S/4HANA never had it for the service: the Deleted event's read finds nothing, and a tombstone takes the key.
    const customerReturn = '64000003';
    const deleted = await deliver({ body: json(customerReturnEvent(customerReturn, 'Deleted')) });
    expect(deleted.outcome).toEqual({ kind: 'accept', result: 'not_found' });

    const res = await call('GET', `/api/returns/${customerReturn}`, viewer());
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      cases: [],
      mails: [],
      push: null,
      events: [expect.objectContaining({ id: deleted.event?.id, outcome: 'not_found', notification: null })],
    });
  });

  it('answers 404 for a return nothing is known about and 400 for a key the parser would refuse', async () => {
    expect((await call('GET', '/api/returns/4242424242', viewer())).statusCode).toBe(404);
    for (const key of ['ab-c', '12345678901', encodeURIComponent("1')")]) {
      expect((await call('GET', `/api/returns/${key}`, viewer())).statusCode).toBe(400);
    }
  });

  it('describes each event family to a Viewer as the console searches it: its page, words and key pattern', async () => {
    expect((await call('GET', '/api/families')).statusCode).toBe(401);
    const res = await call('GET', '/api/families', viewer());
    expect(res.statusCode).toBe(200);
    const families = res.json() as Array<{
      page: string;
      lookup: string;
      keyPattern: string;
      typePrefix: string;
    }>;
    expect(families.map(({ page, lookup }) => [page, lookup])).toEqual([
      ['orders', '/api/orders'],
      ['returns', '/api/returns'],
    ]);
    expect(families[1]).toMatchObject({
      label: 'Customer return',
      noun: 'customer return',
      param: 'customerReturn',
      typePrefix: 'sap.s4.beh.customerreturn.v1.CustomerReturn.',
      state: [['caseStatus', 'case status']],
    });
    for (const family of families) {
      expect(new RegExp(family.keyPattern).test('0060000000')).toBe(true);
      expect(new RegExp(family.keyPattern).test('ab-c')).toBe(false);
    }
  });

  it('tells what happened to one event: processed, still being delivered, or dead-lettered', async () => {
    const events = (source: string, id: string) =>
      call('GET', `/api/events?source=${encodeURIComponent(source)}&id=${encodeURIComponent(id)}`, viewer());

    const done = newOrder();
    const processed = await deliver({ body: json(salesOrderEvent({ salesOrder: done, id: 'evt-done' })) });
    expect(processed.outcome.kind).toBe('accept');
    let res = await events(S4_SOURCE, 'evt-done');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      processed: { family: 'salesOrder', key: done, outcome: 'applied' },
      attempt: null,
      deadLetters: [],
    });

    const failing = newOrder();
    world.s4.setFault((order) => (order === failing ? 'unavailable' : 'ok'));
    const released = await deliver({
      body: json(salesOrderEvent({ salesOrder: failing, id: 'evt-failing' })),
    });
    world.s4.setFault(undefined);
    expect(released.outcome.kind).toBe('release');
    res = await events(S4_SOURCE, 'evt-failing');
    expect(res.json()).toMatchObject({
      processed: null,
      attempt: { attempts: 1, lastError: expect.any(String) },
    });

    const conflicting = await deliver({
      body: json(salesOrderEvent({ salesOrder: newOrder(), id: 'evt-done' })),
    });
    expect(conflicting.outcome).toMatchObject({ kind: 'reject', code: 'conflict' });
    res = await events(S4_SOURCE, 'evt-done');
    expect(res.json().deadLetters).toEqual([
      expect.objectContaining({
        id: conflicting.letter,
        reason: expect.stringMatching(/^conflict/),
        replayedAt: null,
      }),
    ]);

    expect((await events(S4_SOURCE, 'evt-unknown')).statusCode).toBe(404);
    expect((await call('GET', '/api/events?source=x', viewer())).statusCode).toBe(400);
  });

  it('counts orders, outbox and unreplayed dead letters afresh on every call', async () => {
    const count = async (sql: string) => (await world.db.pool.query<{ n: number }>(sql)).rows[0]?.n;
    const before = (await call('GET', '/api/summary', viewer())).json();
    expect(before.ordersByPortalStatus.PartiallyDelivered).toBe(
      await count(
        `select count(*)::int as n from portal_order_status where portal_status = 'PartiallyDelivered'`,
      ),
    );
    expect(before.deadLettersNotReplayed).toBe(
      await count('select count(*)::int as n from dead_letter where replayed_at is null'),
    );
    expect(before.outboxByState.parked).toBe(
      await count(`select count(*)::int as n from mail_outbox where state = 'parked'`),
    );

    // Written behind the service's back: only a recount can see these.
    await world.db.pool.query(
      `insert into portal_order_status (sales_order, portal_status, s4_read_at)
       values ('SUMA1', 'DeliveryBlocked', now()), ('SUMA2', 'DeliveryBlocked', now())`,
    );
    await world.db.pool.query(`delete from dead_letter where id = (select max(id) from dead_letter)`);
    const after = (await call('GET', '/api/summary', viewer())).json();
    expect(after.ordersByPortalStatus.DeliveryBlocked).toBe(
      (before.ordersByPortalStatus.DeliveryBlocked ?? 0) + 2,
    );
    expect(after.deadLettersNotReplayed).toBe(before.deadLettersNotReplayed - 1);
  });

  it('lists parked mail and pending mail that failed, newest first, paged, without sent or untried mail', async () => {
    const order = newOrder();
    // Dated ahead of every other row, so they lead the list.
    const parked = await insertMail(order, 'parked', '550 refused', '2099-01-03T00:00:00Z');
    const failing = await insertMail(order, 'pending', '451 try later', '2099-01-02T00:00:00Z');
    await insertMail(order, 'pending', null, '2099-01-04T00:00:00Z');
    await insertMail(order, 'sent', null, '2099-01-05T00:00:00Z');
    const older = await insertMail(order, 'parked', '550 refused', '2099-01-01T00:00:00Z');

    const first = (await call('GET', '/api/mail?limit=2', viewer())).json();
    expect(first.items.map((m: { id: string }) => m.id)).toEqual([parked, failing]);
    expect(first.items[0]).toMatchObject({
      family: 'salesOrder',
      key: order,
      content: { portalStatus: 'Open' },
      lookup: `orders/${order}`,
      retry: `mail/${parked}/retry`,
      state: 'parked',
      lastError: '550 refused',
    });
    const second = (await call('GET', '/api/mail?limit=2&offset=2', viewer())).json();
    expect(second.items[0].id).toBe(older);
    expect((await call('GET', '/api/mail?limit=100000', viewer())).statusCode).toBe(400);
  });
});

describe('acting on mail and dead letters', () => {
  it('retries a parked mail: pending again, then really sent with the same Message-ID and a fresh budget', async () => {
    const salesOrder = newOrder({ overallSDProcessStatus: 'B' });
    world.smtp.setRefuse(() => 'permanent');
    await deliver({ body: json(salesOrderEvent({ salesOrder })) });
    const parked = await eventually('the mail to be parked', async () => {
      const row = await mailRow(salesOrder);
      return row?.state === 'parked' ? row : undefined;
    });
    world.smtp.setRefuse(undefined);
    const listed = (await call('GET', '/api/mail', viewer())).json();
    expect(listed.items.map((m: { id: string }) => m.id)).toContain(parked.id);

    const res = await call('POST', `/api/mail/${parked.id}/retry`, admin());
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: parked.id, state: 'pending', messageId: parked.messageId });

    // The sender polls once a minute: the mail goes out within the test's patience only if the retry woke it.
    const [received] = await eventually('the retried mail', async () => {
      const sent = world.smtp.messages.filter((m) => m.headers['x-sales-order'] === salesOrder);
      return sent.length === 1 ? sent : undefined;
    });
    expect(received?.messageId).toBe(parked.messageId);
    await eventually('the row to be sent', async () => (await mailRow(salesOrder))?.state === 'sent');
    // One attempt since the retry: the failed one before it no longer counts against the budget.
    expect(await mailRow(salesOrder)).toMatchObject({
      state: 'sent',
      attempts: 1,
      messageId: parked.messageId,
    });

    expect((await call('POST', `/api/mail/${parked.id}/retry`, admin())).statusCode).toBe(409);
    expect((await call('POST', '/api/mail/987654321/retry', admin())).statusCode).toBe(404);
  });

  it('lists dead letters newest first without bodies and shows one with its body as text or base64', async () => {
    const text = await deliver({ body: json('{"specversion":"1.0"') });
    const binary = await deliver({ body: Buffer.from([0xff, 0xfe, 0x00, 0x41]), contentType: undefined });

    const list = (await call('GET', '/api/dead-letters?limit=2', viewer())).json();
    expect(list.items.map((l: { id: string }) => l.id)).toEqual([binary.letter, text.letter]);
    expect(list.items[0]).toMatchObject({
      bodyBytes: 4,
      reason: 'body is not valid UTF-8',
      replayedAt: null,
    });
    expect(list.items[0]).not.toHaveProperty('body');

    const shownText = (await call('GET', `/api/dead-letters/${text.letter}`, viewer())).json();
    expect(shownText).toMatchObject({ bodyEncoding: 'utf8', body: '{"specversion":"1.0"', channel: 'amqp' });
    const shownBinary = (await call('GET', `/api/dead-letters/${binary.letter}`, viewer())).json();
    expect(shownBinary).toMatchObject({
      bodyEncoding: 'base64',
      body: Buffer.from([0xff, 0xfe, 0, 0x41]).toString('base64'),
    });
    expect((await call('GET', '/api/dead-letters/99999999', viewer())).statusCode).toBe(404);
  });

  it('replays a dead letter whose cause is gone to accept, applies the portal state, and refuses a second replay', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'C' });
    // Binary mode, so the replay must bring the stored attributes back as well as the body.
    const binary = binaryEvent({ salesOrder, id: `evt-${salesOrder}` });
    const message = { body: json(binary.body), binaryAttributes: binary.attributes };
    world.s4.setFault((order) => (order === salesOrder ? 'unavailable' : 'ok'));
    let handled = await deliver(message);
    for (let delivery = 1; delivery <= MAX_DELIVERIES; delivery++) handled = await deliver(message);
    world.s4.setFault(undefined);
    expect(handled.outcome).toMatchObject({ kind: 'reject', code: 'delivery_limit' });
    const portal = () =>
      world.db.pool.query('select portal_status from portal_order_status where sales_order = $1', [
        salesOrder,
      ]);
    expect((await portal()).rows).toEqual([]);

    const res = await call('POST', `/api/dead-letters/${handled.letter}/replay`, admin());
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ outcome: 'accept', result: 'applied', replayedAt: expect.any(String) });
    expect((await portal()).rows).toEqual([{ portal_status: 'Delivered' }]);

    const again = await call('POST', `/api/dead-letters/${handled.letter}/replay`, admin());
    expect(again.statusCode).toBe(409);
    const letters = await world.db.pool.query('select replayed_at from dead_letter where event_id = $1', [
      `evt-${salesOrder}`,
    ]);
    expect(letters.rows).toEqual([{ replayed_at: expect.any(Date) }]);
  });

  it('replays a still-invalid dead letter to reject, leaves it unreplayed and stores no second dead letter', async () => {
    const invalid = await deliver({ body: json(salesOrderEvent({ salesOrder: 'not-a-key' })) });
    const count = async () => (await world.db.pool.query('select id from dead_letter')).rowCount;
    const letters = await count();

    for (let replay = 1; replay <= 2; replay++) {
      const res = await call('POST', `/api/dead-letters/${invalid.letter}/replay`, admin());
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        outcome: 'reject',
        code: 'invalid_event',
        reason: 'data.SalesOrder must be 1 to 10 letters or digits, got "not-a-key"',
      });
    }
    const { rows } = await world.db.pool.query('select replayed_at from dead_letter where id = $1', [
      invalid.letter,
    ]);
    expect(rows).toEqual([{ replayed_at: null }]);
    expect(await count()).toBe(letters);
    expect((await call('POST', '/api/dead-letters/99999999/replay', admin())).statusCode).toBe(404);
  });

  it('logs every action with the caller and never a token or an email address', async () => {
    const from = appLogs.length;
    // Work of its own that logs: an event whose email goes to fleet-manager@…, one whose email the relay
    // refuses naming that address, a dead letter replayed, the replay of one that does not exist, and the retry
    // of a mail that does not exist, all by a user whose logon name is an email address, as the console behind
    // the approuter makes them; and a Viewer's replay, refused for the missing scope.
    const salesOrder = newOrder();
    await deliver({ body: json(salesOrderEvent({ salesOrder })) });
    await eventually('the mail sent', async () =>
      world.smtp.messages.some((m) => m.headers['x-sales-order'] === salesOrder),
    );
    const refused = newOrder();
    world.smtp.setRefuse(() => 'permanent');
    try {
      await deliver({ body: json(salesOrderEvent({ salesOrder: refused })) });
      await eventually('the refused mail parked', async () => (await mailRow(refused))?.state === 'parked');
    } finally {
      world.smtp.setRefuse(undefined);
    }
    const { letter } = await deliver({ body: json('{"specversion":"1.0","id":"logged-1"') });
    const ann = userAdmin(ANN);
    expect((await call('POST', `/api/dead-letters/${letter}/replay`, userViewer(BEN))).statusCode).toBe(403);
    expect((await call('POST', `/api/dead-letters/${letter}/replay`, ann)).statusCode).toBe(200);
    expect((await call('POST', '/api/dead-letters/99999999/replay', ann)).statusCode).toBe(404);
    expect((await call('POST', '/api/mail/99999999/retry', ann)).statusCode).toBe(404);

    const lines = appLogs.slice(from);
    const actions = lines
      .map((line) => JSON.parse(line))
      .filter((entry) => String(entry.msg).startsWith('admin:'));
    expect(actions.map((entry) => entry.msg)).toEqual([
      'admin: dead letter replay',
      'admin: dead letter replay refused',
      'admin: mail retry',
    ]);
    // The user by the id an administrator looks up in the identity provider, never by logon name or email.
    for (const entry of actions) expect(entry.caller).toBe(`user/${ANN.userUuid}`);
    const refusals = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'scope missing');
    expect(refusals).toMatchObject([{ caller: `user/${BEN.userUuid}`, scope: 'Admin' }]);
    expect(lines.some((line) => line.includes('"msg":"mail parked"'))).toBe(true);
    // A Message-ID (<uuid@domain>) has the shape of an address but is none: the mail sender logs it on purpose,
    // so that field alone is left out of the search, never a whole line.
    const everything = lines
      .map((line) => JSON.stringify({ ...JSON.parse(line), messageId: undefined }))
      .join('\n');
    expect(everything).not.toMatch(/eyJ[\w-]+\.[\w-]+\./); // a JWT's header
    expect(everything).not.toMatch(/[\w.+-]+@[\w-]+\.example/);
  });
});
