// The customer-return family on a real database and the S/4HANA stand-in over HTTP: its read makes a warranty
// case of the current return, its one statement records the events and upserts the case with the
// LastChangeDateTime guard and the notification ledger; a 404 withdraws the case after Deleted, and is waited
// for after Created or Changed until the event is old enough to settle as not found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CustomerReturnState } from '../../sandbox/s4Returns.js';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import type { S4Settings } from '../../src/config/s4Config.js';
import { classify } from '../../src/errors.js';
import type { ParsedEvent } from '../../src/events/cloudEvent.js';
import type { Family } from '../../src/events/family.js';
import { checkInbox } from '../../src/events/inbox.js';
import type { CaseState } from '../../src/families/customerReturn/effect.js';
import { createCustomerReturnFamily } from '../../src/families/customerReturn/family.js';
import { DEFAULT_RETRY } from '../../src/retry.js';
import { createDestinationLimit } from '../../src/s4/destinationLimit.js';
import { ROOT_CONTEXT } from '../../src/telemetry/tracing.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { registerDestination } from '../support/destination.js';
import { EFFECT_MAIL, parsedReturnEvent } from '../support/effects.js';
import { guardedLogger } from '../support/logGuard.js';
import { returnState } from '../support/returns.js';

const LAG_MS = 300;
let db: TestDatabase;
let s4: S4Server;
let s4Settings: S4Settings;

beforeAll(async () => {
  [db, s4] = await Promise.all([createTestDatabase(), startS4Server()]);
  s4Settings = {
    destination: registerDestination(s4.url),
    timeoutMs: 2000,
    version: 'v2',
    maxConcurrentReads: 2,
    readBatch: 10,
  };
});
afterAll(async () => {
  await Promise.all([db.drop(), s4.close()]);
});

function family(
  warrantyReturnReasons?: ReadonlySet<string>,
  maxDeliveries = 10,
  maxReadLagMs = LAG_MS,
): Family<CaseState> {
  return createCustomerReturnFamily({
    pool: db.pool,
    s4: s4Settings,
    mail: EFFECT_MAIL,
    pushToPortal: false,
    retryPolicy: DEFAULT_RETRY,
    logger: guardedLogger(),
    s4Limit: createDestinationLimit({ maxConcurrent: s4Settings.maxConcurrentReads }),
    observe: {},
    maxReadLagMs,
    maxDeliveries,
    warrantyReturnReasons,
  });
}

let nextReturn = 61_000_000;
/** The state the family reads for a counted delivery of `event`. */
async function readState(events: Family<CaseState>, event: ParsedEvent): Promise<CaseState> {
  await checkInbox(db.pool, event, 'amqp');
  const state = await events.read(event, undefined, ROOT_CONTEXT);
  if (state === null) throw new Error('the return was not found');
  return state;
}

/** One delivery as the flow makes it: counted, read, written. */
async function deliver(events: Family<CaseState>, event: ParsedEvent) {
  await checkInbox(db.pool, event, 'amqp');
  const state = await events.read(event, undefined, ROOT_CONTEXT);
  if (state === null) return { result: 'read found nothing' };
  return events.writeEffect(event, state, ROOT_CONTEXT);
}

/** S/4HANA changes the return and announces it with `change`: what the event's record says after delivery. */
async function changeThenDeliver(
  events: Family<CaseState>,
  customerReturn: string,
  change: string,
  fields: Partial<CustomerReturnState>,
) {
  s4.returns.setReturn(returnState(customerReturn, fields));
  const event = parsedReturnEvent(customerReturn, change);
  await deliver(events, event);
  return recordOf(event);
}

async function caseOf(customerReturn: string) {
  const { rows } = await db.pool.query(
    `select case_status as "caseStatus", sold_to_party as "soldToParty", customer_reference as "customerReference",
       sales_order as "salesOrder", return_reasons as "returnReasons", s4_changed_at as "changedAt",
       notified_case_status as "notified", previous_notified_case_status as "previous",
       thread_message_id as "thread", opened
     from warranty_case where customer_return = $1`,
    [customerReturn],
  );
  return rows[0];
}

async function recordOf(event: ParsedEvent) {
  const { rows } = await db.pool.query(
    `select case family when 'customerReturn' then key end as "customerReturn",
            case family when 'salesOrder' then key end as "salesOrder", outcome, notification
     from processed_event where source = $1 and id = $2`,
    [event.source, event.id],
  );
  return rows[0];
}

describe('the customer-return family', () => {
  it('opens a case with the return’s absolute values and records the event under the return', async () => {
    const customerReturn = String(nextReturn++);
    s4.returns.setReturn(returnState(customerReturn));
    const event = parsedReturnEvent(`00${customerReturn}`, 'Created');
    expect(await deliver(family(), event)).toMatchObject({ result: 'applied' });
    expect(await caseOf(customerReturn)).toMatchObject({
      caseStatus: 'Open',
      soldToParty: '17100002',
      customerReference: 'RMA 7731',
      salesOrder: '1000473',
      returnReasons: ['009', '103'],
      changedAt: new Date('2026-11-30T10:00:00Z'),
      notified: 'Open',
      previous: null,
      thread: expect.stringMatching(/^<.+@fleet\.example>$/),
    });
    expect(await recordOf(event)).toEqual({
      customerReturn,
      salesOrder: null,
      outcome: 'applied',
      notification: 'new',
    });
  });

  it('moves the ledger on a real change of the status only, and keeps the first Message-ID', async () => {
    const customerReturn = String(nextReturn++);
    const events = family();
    s4.returns.setReturn(returnState(customerReturn));
    await deliver(events, parsedReturnEvent(customerReturn, 'Created'));
    const { thread } = await caseOf(customerReturn);

    const changed = await changeThenDeliver(events, customerReturn, 'Changed', {
      overallSDProcessStatus: 'B',
      lastChangeDateTime: '2026-11-30T11:00:00Z',
    });
    expect(changed).toMatchObject({ outcome: 'applied', notification: 'changed' });
    expect(await caseOf(customerReturn)).toMatchObject({
      caseStatus: 'InProcess',
      notified: 'InProcess',
      previous: 'Open',
      thread,
    });

    const item = await changeThenDeliver(events, customerReturn, 'ItemChanged', {
      overallSDProcessStatus: 'B',
      customerReference: 'RMA 7732',
      lastChangeDateTime: '2026-11-30T12:00:00Z',
    });
    expect(item).toMatchObject({ outcome: 'applied', notification: 'unchanged' });
    expect(await caseOf(customerReturn)).toMatchObject({
      customerReference: 'RMA 7732',
      notified: 'InProcess',
      previous: 'Open',
    });
  });

  it('never lets an older state overwrite a newer one', async () => {
    const customerReturn = String(nextReturn++);
    const events = family();
    s4.returns.setReturn(
      returnState(customerReturn, {
        overallSDProcessStatus: 'C',
        lastChangeDateTime: '2026-11-30T12:00:00Z',
      }),
    );
    const event = parsedReturnEvent(customerReturn, 'Changed');
    const newer = await readState(events, event);
    const older = { ...newer, caseStatus: 'InProcess' as const, changedAt: new Date('2026-11-30T11:00:00Z') };
    await events.writeEffect(event, newer, ROOT_CONTEXT);
    const late = parsedReturnEvent(customerReturn, 'Changed');
    expect(await events.writeEffect(late, older, ROOT_CONTEXT)).toMatchObject({ result: 'stale' });
    expect(await caseOf(customerReturn)).toMatchObject({ caseStatus: 'Completed', notified: 'Completed' });
    expect(await recordOf(late)).toMatchObject({ outcome: 'stale', notification: null });
  });

  it('withdraws the case when the return is gone after Deleted, keeping its values, and for good', async () => {
    const customerReturn = String(nextReturn++);
    const events = family();
    s4.returns.setReturn(returnState(customerReturn, { overallSDProcessStatus: 'B' }));
    const created = parsedReturnEvent(customerReturn, 'Created');
    const before = await readState(events, created);
    await events.writeEffect(created, before, ROOT_CONTEXT);

    s4.returns.deleteReturn(customerReturn);
    const deleted = parsedReturnEvent(customerReturn, 'Deleted');
    expect(await deliver(events, deleted)).toMatchObject({ result: 'applied' });
    expect(await caseOf(customerReturn)).toMatchObject({
      caseStatus: 'Withdrawn',
      soldToParty: '17100002',
      salesOrder: '1000473',
      changedAt: new Date('2026-11-30T10:00:00Z'),
      notified: 'Withdrawn',
      previous: 'InProcess',
    });
    expect(await recordOf(deleted)).toMatchObject({ outcome: 'applied', notification: 'changed' });

    // A state read before the deletion, written after it, with a newer change time: the return is gone.
    const late = parsedReturnEvent(customerReturn, 'Changed');
    const readBefore = { ...before, changedAt: new Date('2026-11-30T13:00:00Z') };
    expect(await events.writeEffect(late, readBefore, ROOT_CONTEXT)).toMatchObject({ result: 'stale' });
    expect((await caseOf(customerReturn)).caseStatus).toBe('Withdrawn');
  });

  it('records a Deleted event of a return it never had as not found, leaving a tombstone that opens no case', async () => {
    const customerReturn = String(nextReturn++);
    const deleted = parsedReturnEvent(customerReturn, 'Deleted');
    expect(await deliver(family(), deleted)).toEqual({
      result: 'not_found',
      mailQueued: false,
      pushQueued: false,
    });
    // The tombstone holds the key for a late Created or Changed read before the deletion: no values, no ledger.
    expect(await caseOf(customerReturn)).toEqual({
      caseStatus: 'Withdrawn',
      soldToParty: null,
      customerReference: null,
      salesOrder: null,
      returnReasons: [],
      changedAt: null,
      notified: null,
      previous: null,
      thread: null,
      opened: false,
    });
    expect(await recordOf(deleted)).toMatchObject({ customerReturn, outcome: 'not_found' });
  });

  it('waits for a return missing after Created (transient), then settles it as not found', async () => {
    const customerReturn = String(nextReturn++);
    const events = family();
    const created = parsedReturnEvent(customerReturn, 'Created');
    const early = await deliver(events, created).catch((err: unknown) => err);
    expect(early).toBeInstanceOf(Error);
    expect(classify(early)).toBe('transient');
    expect((early as Error).message).toBe(
      `customer return ${customerReturn} not found yet (replication lag)`,
    );

    await new Promise((resolve) => setTimeout(resolve, LAG_MS + 50));
    expect(await deliver(events, created)).toEqual({ result: 'read found nothing' });
    expect(await caseOf(customerReturn)).toBeUndefined();
  });

  it('settles a return missing after Created as not found on its last allowed delivery, lag or not', async () => {
    const customerReturn = String(nextReturn++);
    const events = family(undefined, 2, 60_000);
    const created = parsedReturnEvent(customerReturn, 'Created');
    const first = await deliver(events, created).catch((err: unknown) => err);
    expect(classify(first)).toBe('transient');
    // The second delivery is the last one MAX_DELIVERIES = 2 lets through: released again, it would be refused.
    expect(await deliver(events, created)).toEqual({ result: 'read found nothing' });
    expect(await caseOf(customerReturn)).toBeUndefined();
  });

  it('records a return that is not a warranty case as such, and opens no case', async () => {
    const customerReturn = String(nextReturn++);
    s4.returns.setReturn(returnState(customerReturn));
    const event = parsedReturnEvent(customerReturn, 'Created');
    expect(await deliver(family(new Set(['W01'])), event)).toMatchObject({ result: 'not_warranty_case' });
    expect(await caseOf(customerReturn)).toBeUndefined();
    expect(await recordOf(event)).toMatchObject({
      customerReturn,
      outcome: 'not_warranty_case',
      notification: null,
    });

    const warranty = parsedReturnEvent(customerReturn, 'Changed');
    expect(await deliver(family(new Set(['103'])), warranty)).toMatchObject({ result: 'applied' });
    expect((await caseOf(customerReturn)).caseStatus).toBe('Open');
  });

  it('records each of a burst of events of one return and notifies the new case once', async () => {
    const customerReturn = String(nextReturn++);
    const events = family();
    s4.returns.setReturn(returnState(customerReturn, { overallSDProcessStatus: 'B' }));
    const burst = ['Changed', 'ItemCreated', 'ItemChanged'].map((change) =>
      parsedReturnEvent(customerReturn, change),
    );
    // Reads answered apart order their states by read time: an earlier read written later is stale.
    await Promise.all(burst.map((event) => deliver(events, event)));
    const records = await Promise.all(burst.map(recordOf));
    expect(records.map((record) => record.customerReturn)).toEqual([
      customerReturn,
      customerReturn,
      customerReturn,
    ]);
    expect(records.every((record) => ['applied', 'stale'].includes(record.outcome))).toBe(true);
    expect(records.filter((record) => record.notification === 'new')).toHaveLength(1);
    expect(records.filter((record) => record.notification === 'changed')).toHaveLength(0);
    expect(await caseOf(customerReturn)).toMatchObject({ caseStatus: 'InProcess', notified: 'InProcess' });
  });
});
