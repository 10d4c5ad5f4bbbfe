// Events one S/4HANA read answered share one effect statement (effectGroups.ts), on a real database: each event is
// recorded, the state is written once and mailed once, and an identity another delivery recorded first makes
// only that event a duplicate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ParsedEvent } from '../../src/events/cloudEvent.js';
import type { EffectResult } from '../../src/events/effect.js';
import { groupEffects } from '../../src/events/effectGroups.js';
import { checkInbox } from '../../src/events/inbox.js';
import { applyEffect } from '../../src/families/salesOrder/effect.js';
import type { PortalOrder } from '../../src/families/salesOrder/state.js';
import { ROOT_CONTEXT } from '../../src/telemetry/tracing.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { EFFECT_MAIL, parsedEvent } from '../support/effects.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

let nextOrder = 6_200_000;
let nextEvent = 0;

function event(salesOrder: string, source?: string): ParsedEvent {
  nextEvent += 1;
  return parsedEvent({ salesOrder, id: `grouped-${nextEvent}`, ...(source && { source }) });
}

function state(salesOrder: string, readAt = new Date()): PortalOrder {
  return {
    salesOrder,
    portalStatus: 'InProcess',
    requestedDeliveryDate: '2026-12-15',
    soldToParty: '17100001',
    customerReference: 'PO-1',
    changedAt: new Date(Date.UTC(2026, 10, 30, 10, 0)),
    readAt,
  };
}

/** The grouped writer of the service, counting the statements it runs and the events each carried. */
function countingWriter() {
  const statements: number[] = [];
  const write = groupEffects<PortalOrder>(async (events, order) => {
    statements.push(events.length);
    return applyEffect(db.pool, events, order, EFFECT_MAIL);
  });
  return { write, statements };
}

async function rowsOf(salesOrder: string) {
  const [processed, mails, portal] = await Promise.all([
    db.pool.query<{ id: string; outcome: string }>(
      `select id, outcome from processed_event where family = 'salesOrder' and key = $1 order by id`,
      [salesOrder],
    ),
    db.pool.query(`select 1 from mail_outbox where family = 'salesOrder' and key = $1`, [salesOrder]),
    db.pool.query(`select 1 from portal_order_status where sales_order = $1`, [salesOrder]),
  ]);
  return {
    processed: processed.rows,
    mails: mails.rowCount,
    portalRows: portal.rowCount,
  };
}

async function attemptsLeft(events: ParsedEvent[]): Promise<number> {
  const { rowCount } = await db.pool.query(`select 1 from event_attempt where id = any($1::text[])`, [
    events.map((e) => e.id),
  ]);
  return rowCount ?? 0;
}

const APPLIED: EffectResult = { result: 'applied', mailQueued: true, pushQueued: false };

describe('effects of events one read answered', () => {
  it('go out as one statement that records every event, writes the state once and queues one email', async () => {
    const salesOrder = String(nextOrder++);
    const events = [event(salesOrder), event(salesOrder), event(salesOrder)];
    for (const e of events) await checkInbox(db.pool, e, 'amqp');
    const answer = state(salesOrder);
    const { write, statements } = countingWriter();

    const results = await Promise.all(events.map((e) => write(e, answer, ROOT_CONTEXT)));

    expect(statements).toEqual([3]);
    expect(results).toEqual([APPLIED, APPLIED, APPLIED]);
    const rows = await rowsOf(salesOrder);
    expect(rows.processed).toEqual(
      events.map((e) => ({ id: e.id, outcome: 'applied' })).sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect(await attemptsLeft(events)).toBe(0);
    expect(rows.mails).toBe(1);
    expect(rows.portalRows).toBe(1);
  });

  it('are written apart when their states or sources differ, or when they come in different turns', async () => {
    const salesOrder = String(nextOrder++);
    const { write, statements } = countingWriter();
    const first = state(salesOrder, new Date(Date.UTC(2026, 11, 1, 8, 0, 0)));
    const later = state(salesOrder, new Date(Date.UTC(2026, 11, 1, 8, 0, 1)));

    await Promise.all([
      write(event(salesOrder), first, ROOT_CONTEXT),
      write(event(salesOrder), later, ROOT_CONTEXT),
      write(event(salesOrder, '/default/sap.s4.beh/0000001'), later, ROOT_CONTEXT),
    ]);
    await write(event(salesOrder), later, ROOT_CONTEXT);

    expect(statements).toEqual([1, 1, 1, 1]);
    expect((await rowsOf(salesOrder)).processed).toHaveLength(4);
  });

  it('make only the event another delivery recorded first a duplicate, and still email once', async () => {
    const salesOrder = String(nextOrder++);
    const events = [event(salesOrder), event(salesOrder), event(salesOrder)];
    const answer = state(salesOrder);
    // Another instance processed the second event already, with an older read of the same order.
    await applyEffect(
      db.pool,
      [events[1] as ParsedEvent],
      state(salesOrder, new Date(Date.now() - 60_000)),
      EFFECT_MAIL,
    );
    const { write, statements } = countingWriter();

    const results = await Promise.all(events.map((e) => write(e, answer, ROOT_CONTEXT)));

    // The group's statement failed on the recorded identity and wrote nothing; then one statement per event.
    expect(statements).toEqual([3, 1, 1, 1]);
    expect(results.map((r) => r.result)).toEqual(['applied', 'duplicate', 'applied']);
    const rows = await rowsOf(salesOrder);
    expect(rows.processed).toHaveLength(3);
    expect(rows.mails).toBe(1);
  });

  it('fail together when the statement fails, so that each event retries', async () => {
    const failure = new Error('connection terminated');
    const write = groupEffects<PortalOrder>(async () => {
      throw failure;
    });
    const salesOrder = String(nextOrder++);
    const answer = state(salesOrder);

    const results = await Promise.allSettled([
      write(event(salesOrder), answer, ROOT_CONTEXT),
      write(event(salesOrder), answer, ROOT_CONTEXT),
    ]);

    expect(results).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ]);
  });
});
