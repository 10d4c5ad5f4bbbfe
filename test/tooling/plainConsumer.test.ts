// The benchmark's plain consumer (bench/plain/consumer.ts) is the comparison the service's performance is judged
// against, so it must keep the same contract: run as the benchmark runs it, a process of its own, against the
// real broker and PostgreSQL, the S/4HANA stand-in and a real SMTP relay, on a small load of new events, two
// changes of one order and redeliveries of events already recorded.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MAILS_IN_FLIGHT, PLAIN_PREFETCH } from '../../bench/plain/consumer.js';
import {
  buildPlainConsumer,
  type ConsumerProcess,
  PLAIN_ENTRY,
  startPlainProcess,
} from '../../bench/plain/process.js';
import { CREATE_PLAIN_TABLES } from '../../bench/plain/tables.js';
import { type BenchPublisher, openPublisher } from '../../bench/publisher.js';
import { type BenchEvent, changes, createOrders } from '../../bench/workload.js';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import { type SmtpSink, startSmtpServer } from '../../sandbox/smtpServer.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { createDatabase, type Database } from '../support/database.js';
import { AMQP_HOST, AMQP_PORT } from '../support/services.js';
import { eventually } from '../support/waits.js';

const event = (salesOrder: string, change: string): BenchEvent => ({
  id: randomBytes(12).toString('hex'),
  salesOrder,
  type: `sap.s4.beh.salesorder.v1.SalesOrder.${change}.v1`,
});

describe('the plain consumer of the benchmark', () => {
  let database: Database;
  let pool: pg.Pool;
  let queue: TestQueue;
  let s4: S4Server;
  let smtp: SmtpSink;
  let publisher: BenchPublisher;
  let consumer: ConsumerProcess | undefined;
  let logDir: string;

  beforeAll(async () => {
    // Compiled, as the benchmark runs it.
    buildPlainConsumer();
    database = await createDatabase('fon_plain');
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    await pool.query(CREATE_PLAIN_TABLES);
    queue = await createTestQueue('fon-plain');
    s4 = await startS4Server();
    smtp = await startSmtpServer();
    publisher = await openPublisher(AMQP_HOST, AMQP_PORT);
    logDir = await mkdtemp(join(tmpdir(), 'fon-plain-'));
  });

  afterAll(async () => {
    await consumer?.stop();
    await publisher?.close();
    await smtp?.close();
    await s4?.close();
    await queue?.delete();
    await pool?.end();
    await database?.drop();
    await rm(logDir, { recursive: true, force: true });
  });

  const recorded = async () =>
    (await pool.query<{ id: string }>('select id from plain_processed_event order by id')).rows.map(
      (r) => r.id,
    );

  /** Publishes `events` and waits until `ids` events are recorded and `mails` emails received (more fail below). */
  async function deliver(events: BenchEvent[], ids: number, mails: number): Promise<void> {
    await publisher.publish(queue.address, events);
    await eventually(
      `${ids} events recorded and ${mails} emails received`,
      async () => (await recorded()).length >= ids && smtp.messages.length >= mails,
    );
  }

  it('is its own code, compiled: it imports nothing of the service', () => {
    const dir = dirname(PLAIN_ENTRY);
    const files = readdirSync(dir).sort();
    expect(files).toEqual(['consumer.js', 'email.js', 'order.js', 'tables.js']);
    for (const file of files) {
      const code = readFileSync(join(dir, file), 'utf8');
      for (const [, from] of code.matchAll(/(?:from|import\() *'([^']+)'/g)) {
        expect(from, file).toMatch(/^(node:\w+|pg|nodemailer|@sap\/xb-msg-amqp-v100|\.\/\w+\.js)$/);
      }
    }
  });

  it('records every event once, mails each real change once and settles duplicates without a read', async () => {
    const orders = createOrders(7_100_000, 4);
    const [moving, ...others] = orders as [(typeof orders)[number], ...typeof orders];
    // The moving order's reads answer its three states in turn; after the last, that one again.
    const states = changes(moving, 3);
    s4.scriptReads(
      moving.salesOrder,
      states.map((state) => ({ state })),
    );
    for (const order of others) s4.setOrder(order);

    const created = orders.map((order) => event(order.salesOrder, 'Created'));
    const [firstChange, secondChange] = [
      event(moving.salesOrder, 'Changed'),
      event(moving.salesOrder, 'Changed'),
    ];
    // Each batch waits for the one before: a redelivery comes after its event was recorded, as the broker
    // redelivers one, and the order's second change after its first was read. (Whether the queue holds
    // anything is asked once, at the end: rabbitmqctl takes seconds.)
    consumer = startPlainProcess({
      databaseUrl: database.url,
      s4Url: s4.url,
      smtpUrl: smtp.url,
      queue: queue.address,
      amqpHost: AMQP_HOST,
      amqpPort: AMQP_PORT,
      logFile: join(logDir, 'plain.log'),
    });
    await consumer.ready();
    await deliver(created, 4, 4);
    await deliver([firstChange, created[1] as BenchEvent, created[2] as BenchEvent], 5, 5);
    await deliver([created[3] as BenchEvent, secondChange, firstChange], 6, 6);

    expect(await recorded()).toEqual([...created, firstChange, secondChange].map((e) => e.id).sort());
    // One read per new event, none for a redelivery.
    expect(s4.calls(moving.salesOrder)).toBe(3);
    for (const order of others) expect(s4.calls(order.salesOrder)).toBe(1);

    const byOrder = (salesOrder: string) =>
      smtp.messages
        .filter((mail) => mail.headers['x-sales-order'] === salesOrder)
        .map((mail) => mail.headers['x-requested-delivery-date']);
    expect(byOrder(moving.salesOrder)).toEqual(states.map((state) => state.requestedDeliveryDate));
    for (const order of others) expect(byOrder(order.salesOrder)).toEqual([order.requestedDeliveryDate]);
    expect(new Set(smtp.messages.map((mail) => mail.messageId)).size).toBe(6);
    const { rows: outbox } = await pool.query<{ unsent: number; queued: number }>(
      `select count(*)::int as "queued", count(*) filter (where sent_at is null)::int as "unsent"
       from plain_mail_outbox`,
    );
    expect(outbox).toEqual([{ queued: 6, unsent: 0 }]);
    const { rows: portal } = await pool.query<{ date: string }>(
      `select requested_delivery_date::text as "date" from plain_portal_status where sales_order = $1::text`,
      [moving.salesOrder],
    );
    expect(portal).toEqual([{ date: states[2]?.requestedDeliveryDate }]);

    // Nothing left ready, held unsettled or rejected: every duplicate was accepted.
    await eventually('the queue settled', () => queue.isIdle());
    expect(await queue.drainDeadLetters()).toEqual([]);
  });

  it('takes no more events while its emails in flight are at the bound, and sends them all once the relay answers', async () => {
    // After the test above: its consumer still runs, with 6 events recorded and 6 emails sent.
    const before = (await recorded()).length;
    const orders = createOrders(7_200_000, MAX_MAILS_IN_FLIGHT + PLAIN_PREFETCH + 50);
    for (const order of orders) s4.setOrder(order);
    let answer = () => {};
    const relayAnswers = new Promise<void>((resolve) => {
      answer = resolve;
    });
    // A relay that takes every message and holds its reply: every send stays in flight.
    smtp.setHold(() => relayAnswers);
    try {
      await publisher.publish(
        queue.address,
        orders.map((order) => event(order.salesOrder, 'Created')),
      );
      await eventually(
        `${MAX_MAILS_IN_FLIGHT} emails in flight`,
        async () => (await recorded()).length - before >= MAX_MAILS_IN_FLIGHT,
      );
      // Whatever passed the bound before it filled: at most a window of deliveries more, never the whole load.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await recorded()).length - before).toBeLessThanOrEqual(MAX_MAILS_IN_FLIGHT + PLAIN_PREFETCH);
    } finally {
      smtp.setHold(undefined);
      answer();
    }
    await eventually(
      'every event recorded and every email received',
      async () =>
        (await recorded()).length === before + orders.length && smtp.messages.length === 6 + orders.length,
    );
    const { rows } = await pool.query<{ unsent: number }>(
      'select count(*)::int as "unsent" from plain_mail_outbox where sent_at is null',
    );
    expect(rows).toEqual([{ unsent: 0 }]);
  });
});
