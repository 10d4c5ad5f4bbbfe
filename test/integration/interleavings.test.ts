// The effect statements (applyEffect, and writeCase of a warranty case) and the identity check (checkInbox) under the interleavings that several
// deliveries and instances produce, forced with row locks held by a second connection instead of latencies: the
// other connection stands for another instance's transaction, open at exactly the point the case needs. Each case
// first proves the call under test is waiting on that lock, then ends the other transaction and checks the result.
// The portal push cases drive the effect and the portal sender in turn against the portal stand-in, holding a
// push in flight at a gate where the case needs one.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalServer, startPortalServer } from '../../sandbox/portalServer.js';
import type { ParsedEvent } from '../../src/events/cloudEvent.js';
import { checkInbox, checkInboxes } from '../../src/events/inbox.js';
import { recordProcessed } from '../../src/events/processedRecord.js';
import { type CaseState, writeCase } from '../../src/families/customerReturn/effect.js';
import { withdrawnCase } from '../../src/families/customerReturn/family.js';
import { returnOverview } from '../../src/families/customerReturn/overview.js';
import type { CaseStatus } from '../../src/families/customerReturn/state.js';
import { PUSH_KINDS } from '../../src/families/index.js';
import { applyEffect } from '../../src/families/salesOrder/effect.js';
import type { PortalOrder } from '../../src/families/salesOrder/state.js';
import { createPortalApi, type PortalApi } from '../../src/portal/portalApi.js';
import { createPortalSender, type PushResult } from '../../src/portal/portalSender.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { registerDestination } from '../support/destination.js';
import { EFFECT_MAIL, parsedEvent, parsedReturnEvent } from '../support/effects.js';
import { gate } from '../support/gate.js';
import { guardedLogger } from '../support/logGuard.js';
import { eventually } from '../support/waits.js';

let db: TestDatabase;
/** The other instance: one connection whose transaction the test opens and ends. */
let other: pg.Client;
let portal: PortalServer;
let portalApi: PortalApi;

beforeAll(async () => {
  [db, portal] = await Promise.all([createTestDatabase(), startPortalServer()]);
  other = new pg.Client({ connectionString: db.url });
  await other.connect();
  portalApi = createPortalApi({
    destination: registerDestination(portal.url),
    timeoutMs: 5000,
    families: PUSH_KINDS,
  });
});
afterAll(async () => {
  await other.end();
  await Promise.all([db.drop(), portal.close()]);
});

let nextOrder = 6_100_000;
let nextEvent = 0;

/** A new event of `salesOrder`, parsed by the service's own parser. */
function event(salesOrder: string): ParsedEvent {
  nextEvent += 1;
  return parsedEvent({ salesOrder, id: `interleaving-${nextEvent}` });
}

/** A state of `salesOrder` as S/4HANA last changed it at 10:`minute`, read now. */
function state(salesOrder: string, minute: number, date = '2026-12-15'): PortalOrder {
  return {
    salesOrder,
    portalStatus: 'InProcess',
    requestedDeliveryDate: date,
    soldToParty: '17100001',
    customerReference: `PO-${minute}`,
    changedAt: new Date(Date.UTC(2026, 10, 30, 10, minute)),
    readAt: new Date(),
  };
}

/** Resolves once `count` sessions of this database wait for a lock: the calls under test reached the held row. */
async function waitingOnLocks(count: number): Promise<void> {
  await eventually(`${count} session(s) waiting for a lock`, async () => {
    const { rows } = await db.pool.query<{ n: number }>(
      `select count(*)::int as "n" from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock'`,
    );
    return rows[0]?.n === count;
  });
}

/** A call that must not finish while the other transaction holds its row; fails the test if it does. */
function pending<T>(work: Promise<T>): { result: Promise<T>; finished: () => boolean } {
  let done = false;
  const result = work.finally(() => {
    done = true;
  });
  result.catch(() => {});
  return { result, finished: () => done };
}

/** Opens the other transaction and records the event in it, as the delivery that wins the race would. */
async function recordInOtherTransaction(delivered: ParsedEvent): Promise<void> {
  await other.query('begin');
  await other.query(
    `insert into processed_event (source, id, type, family, key, outcome, payload_hash)
     values ($1, $2, $3, $4, $5, 'applied', $6)`,
    [delivered.source, delivered.id, delivered.type, delivered.family, delivered.key, delivered.payloadHash],
  );
}

/** Opens the other transaction and writes `order` to the existing portal row, holding the row until it ends. */
async function writePortalInOtherTransaction(order: PortalOrder): Promise<void> {
  await other.query('begin');
  await other.query(
    `update portal_order_status set customer_reference = $2, s4_changed_at = $3, s4_read_at = $4
     where sales_order = $1`,
    [order.salesOrder, order.customerReference, order.changedAt, order.readAt],
  );
}

async function rowsOf(salesOrder: string) {
  const one = async (sql: string) => (await db.pool.query(sql, [salesOrder])).rows;
  return {
    processed: await one(
      `select id, outcome from processed_event where family = 'salesOrder' and key = $1 order by id`,
    ),
    portal: await one(
      `select customer_reference as "customerReference" from portal_order_status where sales_order = $1`,
    ),
    outbox: await one(
      `select content->>'customerReference' as "customerReference" from mail_outbox
       where family = 'salesOrder' and key = $1`,
    ),
  };
}

/**
 * Applies `delivered` at `order` while the other transaction holds a row it needs: proves the effect waits, ends
 * the other transaction with `end`, and returns the effect's result and the order's rows.
 */
async function effectAgainstOther(delivered: ParsedEvent, order: PortalOrder, end: 'commit' | 'rollback') {
  const effect = pending(applyEffect(db.pool, [delivered], order, EFFECT_MAIL));
  await waitingOnLocks(1);
  expect(effect.finished()).toBe(false);
  await other.query(end);
  return { effect: await effect.result, rows: await rowsOf(order.salesOrder) };
}

describe('the effect statement against another transaction', () => {
  /** A new order's event, recorded first by the other transaction, applied here until the other ends with `end`. */
  async function recordedFirstElsewhere(end: 'commit' | 'rollback') {
    const salesOrder = String(nextOrder++);
    const delivered = event(salesOrder);
    await recordInOtherTransaction(delivered);
    return { id: delivered.id, ...(await effectAgainstOther(delivered, state(salesOrder, 1), end)) };
  }

  it('writes nothing for an event another transaction records first, once that transaction commits', async () => {
    const { id, effect, rows } = await recordedFirstElsewhere('commit');

    expect(effect).toEqual({ result: 'duplicate', mailQueued: false, pushQueued: false });
    expect(rows).toEqual({ processed: [{ id, outcome: 'applied' }], portal: [], outbox: [] });
  });

  it('applies the event itself when the transaction that recorded it first rolls back', async () => {
    const { id, effect, rows } = await recordedFirstElsewhere('rollback');

    expect(effect).toEqual({ result: 'applied', mailQueued: true, pushQueued: false });
    expect(rows).toEqual({
      processed: [{ id, outcome: 'applied' }],
      portal: [{ customerReference: 'PO-1' }],
      outbox: [{ customerReference: 'PO-1' }],
    });
  });

  /**
   * A new order applied at 10:01; then another instance writes its state of 10:`held` and holds the portal row
   * while an event reading the state of 10:`read`, with a new date, waits for it, until the other commits.
   */
  async function waitsForPortalRow(held: number, read: number) {
    const salesOrder = String(nextOrder++);
    expect((await applyEffect(db.pool, [event(salesOrder)], state(salesOrder, 1), EFFECT_MAIL)).result).toBe(
      'applied',
    );
    await writePortalInOtherTransaction(state(salesOrder, held));
    const waiting = event(salesOrder);
    return {
      id: waiting.id,
      ...(await effectAgainstOther(waiting, state(salesOrder, read, '2026-12-20'), 'commit')),
    };
  }

  it('records an older state as stale when a newer one commits while it waits for the portal row', async () => {
    const { id, effect, rows } = await waitsForPortalRow(3, 2);

    expect(effect).toEqual({ result: 'stale', mailQueued: false, pushQueued: false });
    expect(rows.processed).toContainEqual({ id, outcome: 'stale' });
    expect(rows.portal).toEqual([{ customerReference: 'PO-3' }]);
    // Only the first state was mailed: the older one's new date never reached the fleet manager.
    expect(rows.outbox).toEqual([{ customerReference: 'PO-1' }]);
  });

  it('applies a newer state over an older one that commits while it waits for the portal row', async () => {
    const { effect, rows } = await waitsForPortalRow(2, 3);

    expect(effect).toEqual({ result: 'applied', mailQueued: true, pushQueued: false });
    expect(rows.portal).toEqual([{ customerReference: 'PO-3' }]);
    expect(rows.outbox).toEqual([{ customerReference: 'PO-1' }, { customerReference: 'PO-3' }]);
  });

  it('queues one email when two first events of a new order are in their transactions at once', async () => {
    // The other connection holds the order's notification row, so the first effect stops after writing the portal
    // row and before deciding on mail; the second effect then waits for that portal row. Both transactions are
    // open at once, neither committed, exactly as two instances' first events of an order can be.
    const salesOrder = String(nextOrder++);
    await other.query('begin');
    await other.query(
      `insert into order_notification (sales_order, portal_status, requested_delivery_date)
       values ($1, 'Open', null)`,
      [salesOrder],
    );
    const first = pending(applyEffect(db.pool, [event(salesOrder)], state(salesOrder, 1), EFFECT_MAIL));
    await waitingOnLocks(1);
    const second = pending(applyEffect(db.pool, [event(salesOrder)], state(salesOrder, 1), EFFECT_MAIL));
    await waitingOnLocks(2);
    await other.query('rollback');

    expect(await first.result).toEqual({ result: 'applied', mailQueued: true, pushQueued: false });
    // Same state, read later: it becomes the portal's, and its pair is the one just queued, so no second email.
    expect(await second.result).toEqual({ result: 'applied', mailQueued: false, pushQueued: false });
    const rows = await rowsOf(salesOrder);
    expect(rows.processed.map((row) => row.outcome)).toEqual(['applied', 'applied']);
    expect(rows.outbox).toHaveLength(1);
  });
});

let nextReturn = 62_000_000;

/** A warranty case of `customerReturn` in `caseStatus`, as S/4HANA last changed it at 10:`minute`, read now. */
function caseState(customerReturn: string, caseStatus: CaseStatus, minute: number): CaseState {
  return {
    customerReturn,
    caseStatus,
    soldToParty: '17100002',
    customerReference: 'RMA 7731',
    salesOrder: '1000473',
    returnReasons: ['009'],
    changedAt: new Date(Date.UTC(2026, 10, 30, 10, minute)),
    readAt: new Date(),
    isCase: true,
  };
}

/** A Deleted event's statement, as the family writes it after S/4HANA answered 404 for the return. */
function withdraw(deleted: ParsedEvent, customerReturn: string) {
  return writeCase(db.pool, [deleted], withdrawnCase(customerReturn, new Date()), EFFECT_MAIL, true);
}

describe('the warranty case effect against another transaction', () => {
  /**
   * Two first events of a new return, each answered by its own read (`first`, then the newer `second`), both in
   * their transactions at once: the other connection records the first event, so the first effect stops after
   * inserting the case and before recording the event; the second effect then waits for that uncommitted case,
   * inserting it too. The other rolls back: the first commits its insert, the second takes the conflict's update.
   */
  async function twoFirstEvents(first: CaseStatus, second: CaseStatus) {
    const customerReturn = String(nextReturn++);
    const events = [
      parsedReturnEvent(customerReturn, 'Created'),
      parsedReturnEvent(customerReturn, 'ItemCreated'),
    ];
    const [created, itemCreated] = events as [ParsedEvent, ParsedEvent];
    await recordInOtherTransaction(created);
    const firstWrite = pending(
      writeCase(db.pool, [created], caseState(customerReturn, first, 1), EFFECT_MAIL, false),
    );
    await waitingOnLocks(1);
    const secondWrite = pending(
      writeCase(db.pool, [itemCreated], caseState(customerReturn, second, 2), EFFECT_MAIL, false),
    );
    await waitingOnLocks(2);
    expect(firstWrite.finished() || secondWrite.finished()).toBe(false);
    await other.query('rollback');

    const results = [await firstWrite.result, await secondWrite.result];
    const { rows: mails } = await db.pool.query(
      `select change, content->>'caseStatus' as "caseStatus", content->>'previousCaseStatus' as "previousCaseStatus"
       from mail_outbox where family = 'customerReturn' and key = $1 order by id`,
      [customerReturn],
    );
    const { rows: records } = await db.pool.query(
      `select id, notification from processed_event where family = 'customerReturn' and key = $1`,
      [customerReturn],
    );
    const notifications = events.map(
      (event) => records.find((record) => record.id === event.id)?.notification,
    );
    return { results, mails, notifications };
  }

  it('queues one new-case email when two first events of a new return read the same status', async () => {
    const { results, mails, notifications } = await twoFirstEvents('Open', 'Open');

    expect(results).toEqual([
      { result: 'applied', mailQueued: true, pushQueued: false },
      { result: 'applied', mailQueued: false, pushQueued: false },
    ]);
    expect(mails).toEqual([{ change: 'new', caseStatus: 'Open', previousCaseStatus: null }]);
    expect(notifications).toEqual(['new', 'unchanged']);
  });

  it('queues the new case, then its change, when two first events of a new return read different statuses', async () => {
    const { results, mails, notifications } = await twoFirstEvents('Open', 'InProcess');

    expect(results).toEqual([
      { result: 'applied', mailQueued: true, pushQueued: false },
      { result: 'applied', mailQueued: true, pushQueued: false },
    ]);
    expect(mails).toEqual([
      { change: 'new', caseStatus: 'Open', previousCaseStatus: null },
      { change: 'changed', caseStatus: 'InProcess', previousCaseStatus: 'Open' },
    ]);
    expect(notifications).toEqual(['new', 'changed']);
  });
});

/** The case row, its emails, its portal push and its events' records of `customerReturn`. */
async function caseRows(customerReturn: string) {
  const one = async (sql: string) => (await db.pool.query(sql, [customerReturn])).rows;
  return {
    kase: await one(
      `select case_status as "caseStatus", sold_to_party as "soldToParty",
              customer_reference as "customerReference", sales_order as "salesOrder",
              return_reasons as "returnReasons", notified_case_status as "notified"
       from warranty_case where customer_return = $1`,
    ),
    mails: await one(
      `select change, content->>'caseStatus' as "caseStatus", content->>'previousCaseStatus' as "previousCaseStatus"
       from mail_outbox where family = 'customerReturn' and key = $1 order by id`,
    ),
    pushes: await one(
      `select content->>'caseStatus' as "caseStatus", content->>'soldToParty' as "soldToParty" from portal_push
       where family = 'customerReturn' and key = $1`,
    ),
    records: await one(
      `select type, outcome, notification from processed_event where family = 'customerReturn' and key = $1
       order by processed_at`,
    ),
  };
}

describe('the withdrawal of a case against its first insert', () => {
  // The portal push tests below count every push their sender books: these cases' pushes are not theirs.
  afterAll(async () => {
    await db.pool.query(`delete from portal_push where family = 'customerReturn'`);
  });

  it('waits for an uncommitted insert of a new case and withdraws that case once it commits', async () => {
    // The other connection records the Created event, so the Created's statement stops after inserting the case
    // and before recording the event, its insert uncommitted: the Deleted's 404 is read meanwhile.
    const customerReturn = String(nextReturn++);
    const created = parsedReturnEvent(customerReturn, 'Created');
    await recordInOtherTransaction(created);
    const creating = pending(
      writeCase(db.pool, [created], caseState(customerReturn, 'Open', 1), EFFECT_MAIL, true),
    );
    await waitingOnLocks(1);
    const deleted = parsedReturnEvent(customerReturn, 'Deleted');
    const deleting = pending(withdraw(deleted, customerReturn));
    // The Deleted's statement waits on the case's key, not on a snapshot that misses the uncommitted case.
    await waitingOnLocks(2);
    expect(creating.finished() || deleting.finished()).toBe(false);
    await other.query('rollback');

    const applied = { result: 'applied', mailQueued: true, pushQueued: true };
    expect([await creating.result, await deleting.result]).toEqual([applied, applied]);
    expect(await caseRows(customerReturn)).toEqual({
      kase: [
        {
          caseStatus: 'Withdrawn',
          soldToParty: '17100002',
          customerReference: 'RMA 7731',
          salesOrder: '1000473',
          returnReasons: ['009'],
          notified: 'Withdrawn',
        },
      ],
      mails: [
        { change: 'new', caseStatus: 'Open', previousCaseStatus: null },
        { change: 'changed', caseStatus: 'Withdrawn', previousCaseStatus: 'Open' },
      ],
      pushes: [{ caseStatus: 'Withdrawn', soldToParty: '17100002' }],
      records: [
        { type: created.type, outcome: 'applied', notification: 'new' },
        { type: deleted.type, outcome: 'applied', notification: 'changed' },
      ],
    });
  });

  it('leaves a tombstone for the Deleted event of a return it never had: a late Created of it is stale', async () => {
    const customerReturn = String(nextReturn++);
    const nothing = { mailQueued: false, pushQueued: false };
    const deleted = parsedReturnEvent(customerReturn, 'Deleted');
    expect(await withdraw(deleted, customerReturn)).toEqual({ result: 'not_found', ...nothing });
    // Read before S/4HANA deleted the return, written after the deletion was recorded.
    const created = parsedReturnEvent(customerReturn, 'Created');
    expect(
      await writeCase(db.pool, [created], caseState(customerReturn, 'Open', 1), EFFECT_MAIL, true),
    ).toEqual({ result: 'stale', ...nothing });
    // The Deleted event again, as S/4HANA may send it twice: still no case to withdraw.
    const again = parsedReturnEvent(customerReturn, 'Deleted');
    expect(await withdraw(again, customerReturn)).toEqual({ result: 'not_found', ...nothing });

    const rows = await caseRows(customerReturn);
    expect(rows.mails).toEqual([]);
    expect(rows.pushes).toEqual([]);
    expect(rows.records).toEqual([
      { type: deleted.type, outcome: 'not_found', notification: null },
      { type: created.type, outcome: 'stale', notification: null },
      { type: again.type, outcome: 'not_found', notification: null },
    ]);
    // The admin API knows the return by its events only: no case was opened.
    expect((await returnOverview(db.pool, customerReturn))?.cases).toEqual([]);
  });
});

describe('the identity check against another transaction', () => {
  it('does not see an event whose record is not committed yet, and that delivery then writes nothing', async () => {
    const salesOrder = String(nextOrder++);
    const delivered = event(salesOrder);
    await recordInOtherTransaction(delivered);

    // The check does not wait for the other transaction: it reads what is committed and counts this delivery.
    expect(await checkInbox(db.pool, delivered, 'amqp')).toEqual({
      processedHash: null,
      attempts: 1,
      lastError: null,
      refused: false,
    });
    await other.query('commit');
    expect(await applyEffect(db.pool, [delivered], state(salesOrder, 1), EFFECT_MAIL)).toEqual({
      result: 'duplicate',
      mailQueued: false,
      pushQueued: false,
    });
    expect((await rowsOf(salesOrder)).portal).toEqual([]);
    // Once the record is committed, the next delivery is told it is processed and counts nothing.
    expect(await checkInbox(db.pool, delivered, 'amqp')).toEqual({
      processedHash: delivered.payloadHash,
      attempts: 0,
      lastError: null,
      refused: false,
    });
  });

  /** A not-found event, counted, recorded first by the other transaction, recorded here until the other ends. */
  async function notFoundRecordedFirstElsewhere(end: 'commit' | 'rollback') {
    const salesOrder = String(nextOrder++);
    const delivered = event(salesOrder);
    await checkInbox(db.pool, delivered, 'amqp');
    await recordInOtherTransaction(delivered);
    const recording = pending(recordProcessed(db.pool, delivered, 'not_found'));
    await waitingOnLocks(1);
    expect(recording.finished()).toBe(false);
    await other.query(end);
    const recorded = await recording.result;
    const attempts = await db.pool.query(`select attempts from event_attempt where source = $1 and id = $2`, [
      delivered.source,
      delivered.id,
    ]);
    return {
      id: delivered.id,
      recorded,
      processed: (await rowsOf(salesOrder)).processed,
      attempts: attempts.rows,
    };
  }

  it('records a not-found event only once when another transaction records it first and commits', async () => {
    const { id, recorded, processed, attempts } = await notFoundRecordedFirstElsewhere('commit');

    expect(recorded).toBe(false);
    expect(processed).toEqual([{ id, outcome: 'applied' }]);
    // The losing statement wrote nothing: the delivery count it would have cleared is still there.
    expect(attempts).toEqual([{ attempts: 1 }]);
  });

  it('records a not-found event when the transaction that recorded it first rolls back', async () => {
    const { id, recorded, processed, attempts } = await notFoundRecordedFirstElsewhere('rollback');

    expect(recorded).toBe(true);
    expect(processed).toEqual([{ id, outcome: 'not_found' }]);
    expect(attempts).toEqual([]);
  });

  it('counts both of two deliveries of one event checked at once', async () => {
    const delivered = event(String(nextOrder++));
    expect((await checkInbox(db.pool, delivered, 'amqp')).attempts).toBe(1);
    // Another instance counts a delivery and has not committed yet.
    await other.query('begin');
    await other.query(`update event_attempt set attempts = attempts + 1 where source = $1 and id = $2`, [
      delivered.source,
      delivered.id,
    ]);

    const waiting = pending(checkInbox(db.pool, delivered, 'amqp'));
    await waitingOnLocks(1);
    expect(waiting.finished()).toBe(false);
    await other.query('commit');

    expect((await waiting.result).attempts).toBe(3);
  });

  it('counts the deliveries of two instances checking the same events together, listed in opposite orders', async () => {
    const [a, b] = [event(String(nextOrder++)), event(String(nextOrder++))] as [ParsedEvent, ParsedEvent];
    for (const delivered of [a, b]) await checkInbox(db.pool, delivered, 'amqp');
    await other.query('begin');
    await other.query(`update event_attempt set attempts = attempts + 1 where source = $1 and id = $2`, [
      a.source,
      a.id,
    ]);

    // Both statements count a and b in the order of their keys: each waits for a holding nothing. Taken as
    // listed, the second would hold b while waiting for a, and the first, once it had a, would wait for b.
    const first = pending(checkInboxes(db.pool, a.source, [a, b], 'amqp'));
    await waitingOnLocks(1);
    const second = pending(checkInboxes(db.pool, a.source, [b, a], 'amqp'));
    await waitingOnLocks(2);
    await other.query('commit');

    const entries = await Promise.all([first.result, second.result]);
    const attemptsOf = (delivered: ParsedEvent) =>
      entries.map((entry) => entry.get(delivered.id)?.attempts).sort();
    expect(attemptsOf(a)).toEqual([3, 4]);
    expect(attemptsOf(b)).toEqual([2, 3]);
  });
});

/** The shown values of three states of an order; changed back to A, it shows A's values at a later time. */
const SHOWN = {
  A: { requestedDeliveryDate: '2026-12-15', customerReference: 'PO-A' },
  B: { requestedDeliveryDate: '2026-12-20', customerReference: 'PO-B' },
  C: { requestedDeliveryDate: '2026-12-22', customerReference: 'PO-C' },
} as const;

/** Applies S/4HANA's state `name` of `salesOrder`, changed at 10:`minute`, with the portal push on. */
async function change(salesOrder: string, name: keyof typeof SHOWN, minute: number) {
  return applyEffect(
    db.pool,
    [event(salesOrder)],
    { ...state(salesOrder, minute), ...SHOWN[name] },
    EFFECT_MAIL,
    true,
  );
}

/** Runs a portal sender until it has booked `count` pushes, then stops it: the results, in booking order. */
async function sendPushes(count: number, api = portalApi): Promise<PushResult[]> {
  const results: PushResult[] = [];
  const booked = gate();
  const sender = createPortalSender({
    pool: db.pool,
    portal: api,
    families: PUSH_KINDS,
    logger: guardedLogger(),
    onResult(result) {
      results.push(result);
      if (results.length === count) booked.open();
    },
  });
  sender.start();
  await booked.opened;
  await sender.stop();
  return results;
}

/** The customer reference and answer of every PUT the portal received for `salesOrder`. */
const puts = (salesOrder: string) =>
  portal.requests(salesOrder).map((request) => [request.body?.customerReference, request.status]);

async function pushRow(salesOrder: string) {
  const { rows } = await db.pool.query(
    `select state, result, content->>'customerReference' as "customerReference" from portal_push
     where family = 'salesOrder' and key = $1`,
    [salesOrder],
  );
  return rows[0];
}

/** B queued, then S/4HANA back at the state the portal holds (`held`): B is withdrawn unsent. */
async function expectChangeBackWithdrawn(salesOrder: string, held: keyof typeof SHOWN, minute: number) {
  expect((await change(salesOrder, 'B', minute)).pushQueued).toBe(true);
  expect((await change(salesOrder, held, minute + 1)).pushQueued).toBe(false);
  expect(await pushRow(salesOrder)).toEqual({
    state: 'done',
    result: 'withdrawn',
    customerReference: SHOWN[held].customerReference,
  });
}

describe('the portal push when S/4HANA changes an order back', () => {
  it('withdraws a state queued and never tried when the order changes back to the state last pushed', async () => {
    const salesOrder = String(nextOrder++);
    await change(salesOrder, 'A', 1);
    expect(await sendPushes(1)).toEqual(['pushed']);

    await expectChangeBackWithdrawn(salesOrder, 'A', 2);
    // Nothing was sent after A, and nothing is left to send: the portal keeps A.
    expect(puts(salesOrder)).toEqual([['PO-A', 200]]);
    expect(portal.state(salesOrder)?.customerReference).toBe('PO-A');
  });

  // C replaces B before B's retry: C is never tried, but the portal may hold B all the same.
  it.each<[string, Array<'C'>]>([
    ['was tried and failed', []],
    ['was tried and failed, then replaced by one never tried', ['C']],
  ])('pushes the state changed back to when the state in between %s', async (_, replacedBy) => {
    const salesOrder = String(nextOrder++);
    await change(salesOrder, 'A', 1);
    expect(await sendPushes(1)).toEqual(['pushed']);
    portal.failNext('unavailable', 1, salesOrder);
    await change(salesOrder, 'B', 2);
    expect(await sendPushes(1)).toEqual(['retry']);
    for (const name of replacedBy) expect((await change(salesOrder, name, 3)).pushQueued).toBe(true);

    // A 503 or a timeout may come after the portal applied B: A must go again.
    expect((await change(salesOrder, 'A', 4)).pushQueued).toBe(true);
    expect(await sendPushes(1)).toEqual(['pushed']);
    expect(puts(salesOrder)).toEqual([
      ['PO-A', 200],
      ['PO-B', 503],
      ['PO-A', 200],
    ]);
    // A's answer tells again what the portal holds: the next change back to it is withdrawn.
    await expectChangeBackWithdrawn(salesOrder, 'A', 5);
  });

  it('follows a push in flight with the state changed back to, once its answer is in', async () => {
    const salesOrder = String(nextOrder++);
    await change(salesOrder, 'A', 1);
    expect(await sendPushes(1)).toEqual(['pushed']);
    await change(salesOrder, 'B', 2);
    // B's push waits at the gate, claimed and leased, before its PUT goes.
    const inFlight = gate();
    const answer = gate();
    const held: PortalApi = {
      async put(push) {
        if ((push.content as { customerReference?: unknown }).customerReference === 'PO-B') {
          inFlight.open();
          await answer.opened;
        }
        return portalApi.put(push);
      },
    };
    const sending = sendPushes(2, held);
    await inFlight.opened;

    expect((await change(salesOrder, 'A', 3)).pushQueued).toBe(true);
    answer.open();
    expect(await sending).toEqual(['pushed', 'pushed']);
    expect(puts(salesOrder)).toEqual([
      ['PO-A', 200],
      ['PO-B', 200],
      ['PO-A', 200],
    ]);
    expect(portal.state(salesOrder)?.customerReference).toBe('PO-A');
    await expectChangeBackWithdrawn(salesOrder, 'A', 4);
  });
});
