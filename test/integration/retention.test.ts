// Retention on the real PostgreSQL: what expires, what must stay, batching, the schedule, and one pass at a
// time across instances.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classify, TransientError } from '../../src/errors.js';
import { FAMILY_EXPIRIES } from '../../src/families/index.js';
import { createRetention, RETENTION_LOCK, type RetentionDeps } from '../../src/maintenance/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { guardedLogger } from '../support/logGuard.js';
import { eventually } from '../support/waits.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const retention = (options: Partial<RetentionDeps> = {}) =>
  createRetention({
    pool: db.pool,
    logger: guardedLogger(),
    processedEventDays: 7,
    mailDays: 30,
    expiries: FAMILY_EXPIRIES,
    ...options,
  });

async function processedEvents(source: string, prefix: string, count: number, ageDays: number) {
  await db.pool.query(
    `insert into processed_event (source, id, type, outcome, payload_hash, processed_at)
     select $1, $2 || g, 't', 'applied', 'h', now() - make_interval(days => $4) from generate_series(1, $3) g`,
    [source, prefix, count, ageDays],
  );
}

async function ids(sql: string, params: unknown[]): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(sql, params);
  return rows.map((row) => row.id).sort();
}

/** A delete of processed_event is queued behind the test's table lock: the pass is inside its first batch. */
async function batchWaitingOnLock(): Promise<boolean> {
  const { rows } = await db.pool.query<{ waiting: boolean }>(
    `select exists (
       select from pg_locks where relation = 'processed_event'::regclass and not granted
     ) as "waiting"`,
  );
  return rows[0]?.waiting === true;
}

async function retentionLockHeld(): Promise<boolean> {
  const { rows } = await db.pool.query<{ held: boolean }>(
    `select exists (
       select from pg_locks
       where locktype = 'advisory' and granted and objid::bigint = $1::bigint
         and database = (select oid from pg_database where datname = current_database())
     ) as "held"`,
    [RETENTION_LOCK],
  );
  return rows[0]?.held === true;
}

/**
 * Runs `work` while another session holds a share lock on processed_event, so that a pass's delete waits inside
 * its batch; `unlock` commits that session, and the lock goes in any case when `work` ends.
 */
async function whileDeletesWait(work: (unlock: () => Promise<void>) => Promise<void>): Promise<void> {
  const blocker = await db.pool.connect();
  await blocker.query('begin');
  await blocker.query('lock table processed_event in share mode');
  try {
    await work(async () => {
      await blocker.query('commit');
    });
  } finally {
    await blocker.query('rollback').catch(() => {});
    blocker.release();
  }
}

describe('retention', () => {
  it('removes expired records and keeps young ones, unsent mail and dead letters never replayed', async () => {
    const source = '/retention/basic';
    await processedEvents(source, 'old-', 3, 8);
    await processedEvents(source, 'young-', 2, 6);
    await db.pool.query(
      `insert into event_attempt (source, id, first_seen_at, last_seen_at) values
         ($1, 'gone-1', now() - interval '9 days', now() - interval '8 days'),
         ($1, 'gone-2', now() - interval '9 days', now() - interval '8 days'),
         ($1, 'gone-3', now() - interval '30 days', now() - interval '8 days'),
         ($1, 'still-seen', now() - interval '30 days', now() - interval '1 day')`,
      [source],
    );
    await db.pool.query(
      `insert into duplicate_arrival (source, id, channel, arrived_at) values
         ($1, 'old-1', 'amqp', now() - interval '8 days'),
         ($1, 'old-2', 'webhook', now() - interval '9 days'),
         ($1, 'young-1', 'amqp', now() - interval '1 day')`,
      [source],
    );
    await db.pool.query(
      `insert into mail_outbox (family, key, content, recipients, message_id, state, created_at, sent_at)
       values ('salesOrder', 'R1', '{"portalStatus": "Open"}', '{a@fleet.example}', '<r1@x>', 'sent', now() - interval '32 days', now() - interval '31 days'),
              ('salesOrder', 'R2', '{"portalStatus": "Open"}', '{a@fleet.example}', '<r2@x>', 'sent', now() - interval '32 days', now() - interval '31 days'),
              ('salesOrder', 'R3', '{"portalStatus": "Open"}', '{a@fleet.example}', '<r3@x>', 'sent', now() - interval '32 days', now() - interval '29 days'),
              ('salesOrder', 'R4', '{"portalStatus": "Open"}', '{a@fleet.example}', '<r4@x>', 'pending', now() - interval '40 days', null),
              ('salesOrder', 'R5', '{"portalStatus": "Open"}', '{a@fleet.example}', '<r5@x>', 'parked', now() - interval '40 days', null)`,
    );
    await db.pool.query(
      `insert into dead_letter (channel, reason, body, received_at, replayed_at)
       values ('amqp', 'replayed long ago', '\\x7b7d', now() - interval '40 days', now() - interval '31 days'),
              ('amqp', 'replayed lately', '\\x7b7d', now() - interval '40 days', now() - interval '2 days'),
              ('amqp', 'never replayed', '\\x7b7d', now() - interval '400 days', null)`,
    );

    // Tombstones of returns deleted before a case was opened, and a withdrawn case as old: a case stays.
    await db.pool.query(
      `insert into warranty_case (source_system, customer_return, case_status, s4_read_at, opened, updated_at)
       values ($1, 'T1', 'Withdrawn', now() - interval '9 days', false, now() - interval '9 days'),
              ($1, 'T2', 'Withdrawn', now() - interval '8 days', false, now() - interval '8 days'),
              ($1, 'T3', 'Withdrawn', now() - interval '1 day', false, now() - interval '1 day'),
              ($1, 'C1', 'Withdrawn', now() - interval '400 days', true, now() - interval '400 days')`,
      [source],
    );

    const report = await retention({ batchSize: 2 }).runOnce();

    expect(report).toMatchObject({
      ran: true,
      deleted: {
        processedEvents: 3,
        eventAttempts: 3,
        duplicateArrivals: 2,
        caseTombstones: 2,
        sentMails: 2,
        replayedDeadLetters: 1,
      },
    });
    expect(await ids('select id from duplicate_arrival where source = $1', [source])).toEqual(['young-1']);
    expect(await ids('select id from processed_event where source = $1', [source])).toEqual([
      'young-1',
      'young-2',
    ]);
    expect(await ids('select id from event_attempt where source = $1', [source])).toEqual(['still-seen']);
    expect(
      await ids('select customer_return as id from warranty_case where source_system = $1', [source]),
    ).toEqual(['C1', 'T3']);
    expect(await ids('select key as id from mail_outbox', [])).toEqual(['R3', 'R4', 'R5']);
    expect(await ids('select reason as id from dead_letter', [])).toEqual([
      'never replayed',
      'replayed lately',
    ]);
  });

  it('removes a backlog many batches long in a single pass', async () => {
    const source = '/retention/backlog';
    await processedEvents(source, 'old-', 1234, 10);

    const report = await retention({ batchSize: 100 }).runOnce();

    expect(report.deleted.processedEvents).toBe(1234);
    expect(await ids('select id from processed_event where source = $1', [source])).toEqual([]);
  });

  it('lets only one of two concurrent passes work; the other skips at once', async () => {
    const source = '/retention/concurrent';
    await processedEvents(source, 'old-', 50, 10);
    // Holds the first pass inside its lock: its delete waits for this table lock.
    await whileDeletesWait(async (unlock) => {
      const first = retention({ batchSize: 10 }).runOnce();
      await eventually('the first pass to hold the retention lock', retentionLockHeld);

      const second = await retention({ batchSize: 10 }).runOnce();
      expect(second).toMatchObject({
        ran: false,
        deleted: {
          processedEvents: 0,
          eventAttempts: 0,
          duplicateArrivals: 0,
          caseTombstones: 0,
          sentMails: 0,
          replayedDeadLetters: 0,
        },
      });

      await unlock();
      expect((await first).deleted.processedEvents).toBe(50);
    });
  });

  it('fails a pass as transient when its session is terminated mid-pass, and the next pass finds the lock free', async () => {
    const source = '/retention/terminated';
    await processedEvents(source, 'old-', 30, 10);
    // A pool of its own with the service's idle-error listener: the test's pool should not see the loss.
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    pool.on('error', () => {});
    try {
      await whileDeletesWait(async (unlock) => {
        const pass = retention({ pool, batchSize: 10 })
          .runOnce()
          .then(
            () => undefined,
            (err: unknown) => err,
          );
        await eventually('the pass to wait on its first batch', batchWaitingOnLock);
        await db.pool.query(
          `select pg_terminate_backend(pid) from pg_locks
          where relation = 'processed_event'::regclass and not granted`,
        );
        const failure = await pass;
        expect(failure).toBeInstanceOf(TransientError);
        expect(classify(failure)).toBe('transient');
        await unlock();
        expect(await retentionLockHeld()).toBe(false);
        expect((await retention({ pool }).runOnce()).deleted.processedEvents).toBe(30);
      });
    } finally {
      await pool.end();
    }
  });

  it('ends a pass after its current batch when stopped, leaving the rest for the next pass', async () => {
    const source = '/retention/stopped';
    await processedEvents(source, 'old-', 50, 10);
    await whileDeletesWait(async (unlock) => {
      const stopping = retention({ batchSize: 10 });
      const pass = stopping.runOnce();
      await eventually('the pass to wait on its first batch', batchWaitingOnLock);
      const stopped = stopping.stop();
      await unlock();
      await stopped;
      expect((await pass).deleted.processedEvents).toBe(10);
      expect(await ids('select id from processed_event where source = $1', [source])).toHaveLength(40);
    });
    expect((await retention().runOnce()).deleted.processedEvents).toBe(40);
  });

  it('runs by itself on its schedule once started, and stops', async () => {
    const source = '/retention/scheduled';
    const scheduled = retention({ intervalMs: 50 });
    scheduled.start();
    try {
      await processedEvents(source, 'old-', 20, 10);
      await eventually(
        'the scheduled pass to remove the expired rows',
        async () => (await ids('select id from processed_event where source = $1', [source])).length === 0,
      );
    } finally {
      await scheduled.stop();
    }
    // Stopped: expired rows written now stay, though many intervals (50 ms ±50 %) pass. Waiting cannot make this
    // fail while stop() works; a schedule still running removes them within the first few intervals.
    await processedEvents(source, 'after-stop-', 20, 10);
    await sleep(1000);
    expect(await ids('select id from processed_event where source = $1', [source])).toHaveLength(20);
  });
});
