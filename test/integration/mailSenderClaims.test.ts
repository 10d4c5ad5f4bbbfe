// When the mail sender claims: at once for work that may be due, and never for nothing; and how it records its
// sends. The poll is set to a minute, so an email sent within seconds was claimed by a wake; claims and `sent`
// marks are counted as the statements the real pool was asked to run.
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpServer } from '../../sandbox/smtpServer.js';
import { mailKinds } from '../../src/families/index.js';
import { CLAIM_DUE, MARK_SENT } from '../../src/notifications/mailOutbox.js';
import { createMailSender, type MailResult, type MailSender } from '../../src/notifications/mailSender.js';
import { type MailTransport, smtpTransport } from '../../src/notifications/mailTransport.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { gate } from '../support/gate.js';
import { guardedLogger } from '../support/logGuard.js';
import { eventually } from '../support/waits.js';

const POLL_MS = 60_000;
/** Well below the poll: an email sent within it was claimed by a wake. */
const WAKE_BOUND_MS = 10_000;

let db: TestDatabase;
let smtp: SmtpSink;
let transport: MailTransport;
/** The same database through a pool that counts the outbox claims it runs. */
let pool: pg.Pool;
let claims = 0;
let marks = 0;

beforeAll(async () => {
  [db, smtp] = await Promise.all([createTestDatabase(), startSmtpServer()]);
  transport = smtpTransport(smtp.url);
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
  // On each connection, so that statements run on a checked-out client (a claim's transaction) count too.
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    client.query = ((...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
      if (text === CLAIM_DUE) claims++;
      if (text === MARK_SENT) marks++;
      return query(...args);
    }) as typeof client.query;
  });
});
afterAll(async () => {
  transport.close();
  await pool.end();
  await Promise.all([db.drop(), smtp.close()]);
});
beforeEach(async () => {
  await db.pool.query('truncate mail_outbox');
  smtp.clear();
  smtp.setHold(undefined);
  claims = 0;
  marks = 0;
});

/** Queues one email for `salesOrder`, as the effect's statement would; returns its Message-ID. */
async function queue(salesOrder: string): Promise<string> {
  const { rows } = await db.pool.query<{ messageId: string }>(
    `insert into mail_outbox (family, key, content, recipients, message_id)
     values ('salesOrder', $1::text, '{"portalStatus": "Open"}', array['fleet-manager@fleet.example'], '<' || gen_random_uuid() || '@fleet.example>')
     returning message_id as "messageId"`,
    [salesOrder],
  );
  return (rows[0] as { messageId: string }).messageId;
}

function startSender(onResult: (result: MailResult) => void = () => {}): MailSender {
  const sender = createMailSender({
    pool,
    transport,
    families: mailKinds({
      salesOrder: { portalOrderUrl: undefined },
      customerReturn: { warrantyReturnReasons: undefined },
    }),
    from: 'notifier@fleet.example',
    logger: guardedLogger(),
    pollMs: POLL_MS,
    onResult,
  });
  sender.start();
  return sender;
}

const received = () => smtp.messages.map((mail) => mail.messageId);

describe('when the mail sender claims', () => {
  it("claims an order's newer email as soon as the older one ahead of it is booked", async () => {
    const older = await queue('A');
    const newer = await queue('A');
    const sender = startSender();
    try {
      await smtp.waitForCount(2, WAKE_BOUND_MS);
      expect(received()).toEqual([older, newer]);
    } finally {
      await sender.stop();
    }
  });

  it("claims an order's email queued while its older one was being sent, once that one is booked", async () => {
    const held = gate();
    let onTheWire = false;
    smtp.setHold(() => {
      onTheWire = true;
      return held.opened;
    });
    const older = await queue('B');
    const sender = startSender();
    try {
      await eventually('the older email to be on the wire', async () => onTheWire);
      const newer = await queue('B');
      // The commit that queued it wakes the sender; its claim must skip it, the older one being in flight.
      sender.wake();
      await eventually('the claim the wake caused', async () => claims === 2);
      held.open();
      await smtp.waitForCount(2, WAKE_BOUND_MS);
      expect(received()).toEqual([older, newer]);
    } finally {
      await sender.stop();
    }
  });

  it('claims once for emails that all fit the free slots, and not again when they are sent', async () => {
    const queued = await Promise.all(['C', 'D', 'E'].map(queue));
    const results: MailResult[] = [];
    const sender = startSender((result) => results.push(result));
    try {
      await eventually('three emails booked as sent', async () => results.length === 3);
      // A wake a booking or a freed slot would cause runs at once; give it ample time to show up.
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await sender.stop();
    }
    expect(results).toEqual(['sent', 'sent', 'sent']);
    expect(received().sort()).toEqual([...queued].sort());
    expect(claims).toBe(1);
  });
});

describe('when the mail sender records its sends', () => {
  it('records the sends that end while a `sent` mark is in flight in one statement, not one each', async () => {
    for (const salesOrder of ['M1', 'M2', 'M3', 'M4']) await queue(salesOrder);
    // The relay holds all four at DATA while this test locks their rows; then the first mark to go waits on its
    // row, and the other three sends end while it waits.
    const data = gate();
    let atData = 0;
    smtp.setHold(() => {
      atData++;
      return data.opened;
    });
    const results: MailResult[] = [];
    const sender = startSender((result) => results.push(result));
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await eventually('all four emails to reach DATA', async () => atData === 4);
      await locker.query('begin');
      await locker.query('select from mail_outbox for update');
      data.open();
      await eventually('the relay to accept all four and a mark to wait on its row', async () => {
        if (smtp.messages.length < 4) return false;
        const { rows } = await db.pool.query(
          `select from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query = $1::text`,
          [MARK_SENT],
        );
        return rows.length === 1;
      });
      await locker.query('rollback');
      await eventually('all four sends to be recorded', async () => results.length === 4);
      expect(results).toEqual(['sent', 'sent', 'sent', 'sent']);
      const { rows } = await db.pool.query<{ state: string }>('select state from mail_outbox');
      expect(rows.map((row) => row.state)).toEqual(['sent', 'sent', 'sent', 'sent']);
      // The first on its own, the three that ended while it waited together.
      expect(marks).toBe(2);
    } finally {
      await locker.end();
      await sender.stop();
    }
  });
});
