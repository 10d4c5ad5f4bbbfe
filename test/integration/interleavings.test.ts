// The effect statement (applyEffect) and the identity check (checkInbox) under the interleavings that several
// deliveries and instances produce, forced with row locks held by a second connection instead of latencies: the
// other connection stands for another instance's transaction, open at exactly the point the case needs. Each case
// first proves the call under test is waiting on that lock, then ends the other transaction and checks the result.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import { applyEffect, type EffectMail } from '../../src/events/applyEffect.js';
import { type ParsedEvent, parseCloudEvent } from '../../src/events/cloudEvent.js';
import { checkInbox } from '../../src/events/inbox.js';
import type { PortalOrder } from '../../src/portal/portalStatus.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/harness.js';

let db: TestDatabase;
/** The other instance: one connection whose transaction the test opens and ends. */
let other: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  other = new pg.Client({ connectionString: db.url });
  await other.connect();
});
afterAll(async () => {
  await other.end();
  await db.drop();
});

const MAIL: EffectMail = {
  to: ['fleet-manager@fleet.example'],
  locale: 'en',
  messageIdDomain: 'fleet.example',
};
let nextOrder = 6_100_000;
let nextEvent = 0;

/** A new event of `salesOrder`, parsed by the service's own parser. */
function event(salesOrder: string): ParsedEvent {
  nextEvent += 1;
  const body = Buffer.from(salesOrderEvent({ salesOrder, id: `interleaving-${nextEvent}` }));
  const parsed = parseCloudEvent({ body, contentType: 'application/json', binaryAttributes: {} }, 1 << 20);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.event;
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
    `insert into processed_event (source, id, type, sales_order, outcome, payload_hash)
     values ($1, $2, $3, $4, 'applied', $5)`,
    [delivered.source, delivered.id, delivered.type, delivered.salesOrder, delivered.payloadHash],
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
    processed: await one(`select id, outcome from processed_event where sales_order = $1 order by id`),
    portal: await one(
      `select customer_reference as "customerReference" from portal_order_status where sales_order = $1`,
    ),
    outbox: await one(
      `select customer_reference as "customerReference" from mail_outbox where sales_order = $1`,
    ),
  };
}

describe('the effect statement against another transaction', () => {
  it('writes nothing for an event another transaction records first, once that transaction commits', async () => {
    const salesOrder = String(nextOrder++);
    const delivered = event(salesOrder);
    await recordInOtherTransaction(delivered);

    const losing = pending(applyEffect(db.pool, delivered, state(salesOrder, 1), MAIL));
    await waitingOnLocks(1);
    expect(losing.finished()).toBe(false);
    await other.query('commit');

    expect(await losing.result).toEqual({ result: 'duplicate', mailQueued: false, pushQueued: false });
    expect(await rowsOf(salesOrder)).toEqual({
      processed: [{ id: delivered.id, outcome: 'applied' }],
      portal: [],
      outbox: [],
    });
  });

  it('applies the event itself when the transaction that recorded it first rolls back', async () => {
    const salesOrder = String(nextOrder++);
    const delivered = event(salesOrder);
    await recordInOtherTransaction(delivered);

    const waiting = pending(applyEffect(db.pool, delivered, state(salesOrder, 1), MAIL));
    await waitingOnLocks(1);
    await other.query('rollback');

    expect(await waiting.result).toEqual({ result: 'applied', mailQueued: true, pushQueued: false });
    expect(await rowsOf(salesOrder)).toEqual({
      processed: [{ id: delivered.id, outcome: 'applied' }],
      portal: [{ customerReference: 'PO-1' }],
      outbox: [{ customerReference: 'PO-1' }],
    });
  });

  it('records an older state as stale when a newer one commits while it waits for the portal row', async () => {
    const salesOrder = String(nextOrder++);
    expect((await applyEffect(db.pool, event(salesOrder), state(salesOrder, 1), MAIL)).result).toBe(
      'applied',
    );
    // Another instance writes the state of 10:03 and holds the portal row until it commits.
    await writePortalInOtherTransaction(state(salesOrder, 3));

    const older = event(salesOrder);
    const waiting = pending(applyEffect(db.pool, older, state(salesOrder, 2, '2026-12-20'), MAIL));
    await waitingOnLocks(1);
    expect(waiting.finished()).toBe(false);
    await other.query('commit');

    expect(await waiting.result).toEqual({ result: 'stale', mailQueued: false, pushQueued: false });
    const rows = await rowsOf(salesOrder);
    expect(rows.processed).toContainEqual({ id: older.id, outcome: 'stale' });
    expect(rows.portal).toEqual([{ customerReference: 'PO-3' }]);
    // Only the first state was mailed: the older one's new date never reached the fleet manager.
    expect(rows.outbox).toEqual([{ customerReference: 'PO-1' }]);
  });

  it('applies a newer state over an older one that commits while it waits for the portal row', async () => {
    const salesOrder = String(nextOrder++);
    expect((await applyEffect(db.pool, event(salesOrder), state(salesOrder, 1), MAIL)).result).toBe(
      'applied',
    );
    await writePortalInOtherTransaction(state(salesOrder, 2));

    const newer = event(salesOrder);
    const waiting = pending(applyEffect(db.pool, newer, state(salesOrder, 3, '2026-12-20'), MAIL));
    await waitingOnLocks(1);
    await other.query('commit');

    expect(await waiting.result).toEqual({ result: 'applied', mailQueued: true, pushQueued: false });
    const rows = await rowsOf(salesOrder);
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
    const first = pending(applyEffect(db.pool, event(salesOrder), state(salesOrder, 1), MAIL));
    await waitingOnLocks(1);
    const second = pending(applyEffect(db.pool, event(salesOrder), state(salesOrder, 1), MAIL));
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

describe('the identity check against another transaction', () => {
  it('does not see an event whose record is not committed yet, and that delivery then writes nothing', async () => {
    const salesOrder = String(nextOrder++);
    const delivered = event(salesOrder);
    await recordInOtherTransaction(delivered);

    // The check does not wait for the other transaction: it reads what is committed and counts this delivery.
    expect(await checkInbox(db.pool, delivered)).toEqual({
      processedHash: null,
      attempts: 1,
      lastError: null,
    });
    await other.query('commit');
    expect(await applyEffect(db.pool, delivered, state(salesOrder, 1), MAIL)).toEqual({
      result: 'duplicate',
      mailQueued: false,
      pushQueued: false,
    });
    expect((await rowsOf(salesOrder)).portal).toEqual([]);
    // Once the record is committed, the next delivery is told it is processed and counts nothing.
    expect(await checkInbox(db.pool, delivered)).toEqual({
      processedHash: delivered.payloadHash,
      attempts: 0,
      lastError: null,
    });
  });

  it('counts both of two deliveries of one event checked at once', async () => {
    const delivered = event(String(nextOrder++));
    expect((await checkInbox(db.pool, delivered)).attempts).toBe(1);
    // Another instance counts a delivery and has not committed yet.
    await other.query('begin');
    await other.query(`update event_attempt set attempts = attempts + 1 where source = $1 and id = $2`, [
      delivered.source,
      delivered.id,
    ]);

    const waiting = pending(checkInbox(db.pool, delivered));
    await waitingOnLocks(1);
    expect(waiting.finished()).toBe(false);
    await other.query('commit');

    expect((await waiting.result).attempts).toBe(3);
  });
});
