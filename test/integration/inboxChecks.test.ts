// Identity checks asked for in one turn of the event loop share one statement (batchInboxChecks), on a real
// database: each event gets its own entry, sources stay apart, an identity asked for twice is counted twice, and
// a failed statement fails every check it carried.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ParsedEvent } from '../../src/events/cloudEvent.js';
import { checkIdentityBatched as batchInboxChecks } from '../../src/events/identityCheck.js';
import { CHECK_INBOXES, checkInbox } from '../../src/events/inbox.js';
import { recordProcessed } from '../../src/events/processedRecord.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { parsedEvent } from '../support/effects.js';
import { rowsRead } from '../support/rowsRead.js';

let db: TestDatabase;
/** Statements the pool ran: each takes a connection of its own. */
let statements = 0;
beforeAll(async () => {
  db = await createTestDatabase();
  db.pool.on('acquire', () => {
    statements += 1;
  });
});
afterAll(() => db.drop());

let nextEvent = 0;

function event(source?: string): ParsedEvent {
  nextEvent += 1;
  return parsedEvent({ salesOrder: '6300000', id: `checked-${nextEvent}`, ...(source && { source }) });
}

/** Runs `work` and returns what it resolved to with the statements it ran. */
async function counted<T>(work: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const before = statements;
  const result = await work();
  return { result, statements: statements - before };
}

describe('identity checks asked for in one turn', () => {
  it('go out as one statement that gives each event its own entry', async () => {
    const processed = event();
    const seenOnce = event();
    const fresh = event();
    await checkInbox(db.pool, processed, 'amqp');
    await recordProcessed(db.pool, processed, 'not_found');
    await checkInbox(db.pool, seenOnce, 'amqp');
    const check = batchInboxChecks(db.pool);

    const { result, statements } = await counted(() =>
      Promise.all([check(processed, 'amqp'), check(seenOnce, 'amqp'), check(fresh, 'amqp')]),
    );

    expect(statements).toBe(1);
    expect(result).toEqual([
      { processedHash: processed.payloadHash, attempts: 0, lastError: null, refused: false },
      { processedHash: null, attempts: 2, lastError: null, refused: false },
      { processedHash: null, attempts: 1, lastError: null, refused: false },
    ]);
  });

  it('give a check alone in its turn the entry the shared statement gives', async () => {
    // Twins in the same three states: processed, delivered once before, new.
    const [alone, together] = [
      [event(), event(), event()],
      [event(), event(), event()],
    ] as const;
    for (const [processed, seenOnce] of [alone, together]) {
      await checkInbox(db.pool, processed, 'amqp');
      await recordProcessed(db.pool, processed, 'not_found');
      await checkInbox(db.pool, seenOnce, 'amqp');
    }
    const check = batchInboxChecks(db.pool);

    const lone = [];
    for (const each of alone) lone.push(await counted(() => check(each, 'amqp')));
    const shared = await counted(() => Promise.all(together.map((each) => check(each, 'amqp'))));

    expect(lone.map((checked) => checked.statements)).toEqual([1, 1, 1]);
    expect(shared.statements).toBe(1);
    expect(lone.map((checked) => checked.result)).toEqual([
      { processedHash: alone[0].payloadHash, attempts: 0, lastError: null, refused: false },
      { processedHash: null, attempts: 2, lastError: null, refused: false },
      { processedHash: null, attempts: 1, lastError: null, refused: false },
    ]);
    expect(shared.result).toEqual([
      { processedHash: together[0].payloadHash, attempts: 0, lastError: null, refused: false },
      { processedHash: null, attempts: 2, lastError: null, refused: false },
      { processedHash: null, attempts: 1, lastError: null, refused: false },
    ]);
  });

  it('go out as one statement per source', async () => {
    const check = batchInboxChecks(db.pool);
    const events = [event('/default/sap.s4.beh/0000001'), event('/default/sap.s4.beh/0000002'), event()];

    const { result, statements } = await counted(() =>
      Promise.all(events.map((each) => check(each, 'amqp'))),
    );

    expect(statements).toBe(3);
    expect(result.map((entry) => entry.attempts)).toEqual([1, 1, 1]);
  });

  it('count an identity asked for twice as two deliveries', async () => {
    const check = batchInboxChecks(db.pool);
    const twice = event();

    const { result, statements } = await counted(() =>
      Promise.all([check(twice, 'amqp'), check(twice, 'amqp'), check(event(), 'amqp')]),
    );

    expect(statements).toBe(2);
    expect(result.map((entry) => entry.attempts).sort()).toEqual([1, 1, 2]);
  });

  it('fail together when their statement fails', async () => {
    const check = batchInboxChecks(db.pool);
    // PostgreSQL refuses a NUL character in text: the statement fails as a whole.
    const unstorable = { ...event(), id: 'checked-\u0000' };
    const valid = event();

    const results = await Promise.allSettled([check(valid, 'amqp'), check(unstorable, 'amqp')]);

    expect(results.map((settled) => settled.status)).toEqual(['rejected', 'rejected']);
    // Nothing of the failed statement was written: the valid event is counted once its own check runs.
    expect((await check(valid, 'amqp')).attempts).toBe(1);
  });
});

describe('the identity check on a growing table', () => {
  it('reads only the records of the identities it asks for, on a connection that checked while the table was small', async () => {
    // A service's connection prepares the check when a new deployment has processed a few events and keeps it
    // while thousands are recorded: each check must probe its own identities, not read the source's records.
    const fresh = await createTestDatabase();
    const client = await fresh.pool.connect();
    const source = '/default/sap.s4.beh/244572008';
    const record = (first: number, count: number) =>
      client.query(
        `insert into processed_event (source, id, type, outcome, payload_hash)
         select $1::text, 'recorded-' || n, 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1', 'applied', 'hash'
         from generate_series($2::int, $2::int + $3::int - 1) n`,
        [source, first, count],
      );
    // As checkInboxes sends it: the same name and text, so prepared once on this connection and kept.
    const check = (ids: string[]) =>
      client.query({
        name: 'check-inbox',
        text: CHECK_INBOXES,
        values: [
          source,
          ids,
          ids.map(() => 'hash'),
          'amqp',
          ids.map(() => '6300000'),
          ids.map(() => null),
          null,
        ],
      });
    try {
      const recorded = 8000;
      await client.query('begin');
      await record(1, 40);
      for (let checks = 0; checks < 6; checks++) await check([`recorded-${checks + 1}`, `early-${checks}`]);
      await record(100, recorded);
      const ids = ['recorded-7', 'recorded-5000', ...Array.from({ length: 8 }, (_, i) => `new-${i}`)];
      let entries = 0;
      const read = await rowsRead(client, 'processed_event', async () => {
        entries = (await check(ids)).rows.length;
      });
      expect(entries).toBe(ids.length);
      expect(read).toBeLessThan(recorded / 10);
    } finally {
      await client.query('rollback');
      client.release();
      await fresh.drop();
    }
  });

  it('reads only the counts of the events it records, however many others an outage left counted', async () => {
    // An S/4HANA outage leaves thousands of events counted and unprocessed; recording one must find its own count
    // by key, on a connection that recorded while the table was small.
    const fresh = await createTestDatabase();
    const client = await fresh.pool.connect();
    const count = (prefix: string, first: number, total: number) =>
      client.query(
        `insert into event_attempt (source, id, channel)
         select '/default/sap.s4.beh/244572008', $1::text || n, 'amqp'
         from generate_series($2::int, $2::int + $3::int - 1) n`,
        [prefix, first, total],
      );
    try {
      const counted = 4000;
      await client.query('begin');
      await count('early-', 1, 10);
      for (let records = 1; records <= 6; records++) {
        await recordProcessed(
          client,
          parsedEvent({ salesOrder: '6300000', id: `early-${records}` }),
          'not_found',
        );
      }
      await count('waiting-', 1, counted);
      const recorded = parsedEvent({ salesOrder: '6300000', id: 'waiting-2000' });
      const read = await rowsRead(client, 'event_attempt', () =>
        recordProcessed(client, recorded, 'not_found'),
      );
      const { rows } = await client.query(`select from event_attempt where id = 'waiting-2000'`);
      expect(rows).toHaveLength(0);
      expect(read).toBeLessThan(counted / 10);
    } finally {
      await client.query('rollback');
      client.release();
      await fresh.drop();
    }
  });
});
