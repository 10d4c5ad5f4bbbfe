// The plain consumer the service is measured against: what a competent developer writes in an afternoon for the
// same contract with the same public libraries (the AMQP client, pg, nodemailer, fetch), and nothing of the
// service's code. `prefetch` messages in flight, and for each one:
// 1. parse the JSON;
// 2. one statement: is the event (source, id) processed? if not, count this delivery (tables.ts says why);
//    processed: a duplicate, accepted; past the delivery limit: rejected to the dead-letter queue;
// 3. one GET of the order from S/4HANA (OData V2, order.ts);
// 4. ONE transaction: forget the event's count, record the event, upsert the portal row unless the stored state is newer,
//    note the (status, date) pair in the ledger and, only when that pair changed, queue the email in the outbox;
// 5. accept the message after the commit;
// 6. send the queued email over a pooled SMTP connection and mark it sent (at start, the emails a stopped process
//    left unsent go first). At most MAX_MAILS_IN_FLIGHT are being sent: beyond that, the next delivery waits
//    before it is taken on, so a slow relay holds intake back instead of filling the memory.
// Runs compiled, like the service (process.ts builds it into dist/plain/):
//   node dist/plain/consumer.js --database-url URL --s4-url URL --smtp-url URL --queue ADDRESS
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, type IncomingMessage } from '@sap/xb-msg-amqp-v100';
import pg from 'pg';
import { type Mailer, renderEmail, smtpMailer } from './email.js';
import { type Order, readOrder } from './order.js';
import {
  CHECK_IDENTITY,
  FORGET_ATTEMPTS,
  MARK_SENT,
  NOTE_CHANGE,
  QUEUE_MAIL,
  type QueuedMail,
  RECORD_EVENT,
  UNSENT_MAILS,
  UPSERT_STATUS,
} from './tables.js';

export const PLAIN_PREFETCH = 50;
export const MAX_MAILS_IN_FLIGHT = 50;
// The service's defaults (MAX_DELIVERIES, MAIL_TO in the bench's service environment).
const MAX_DELIVERIES = 10;
const MAIL_TO = ['fleet-manager@fleet.example'];

interface PlainEvent {
  source: string;
  id: string;
  salesOrder: string | undefined;
}

function parse(body: Buffer): PlainEvent {
  const event = JSON.parse(body.toString('utf8')) as {
    source?: unknown;
    id?: unknown;
    data?: { SalesOrder?: unknown };
  };
  if (typeof event.source !== 'string' || typeof event.id !== 'string') throw new Error('no source or id');
  const salesOrder = event.data?.SalesOrder;
  return {
    source: event.source,
    id: event.id,
    salesOrder: typeof salesOrder === 'string' ? salesOrder : undefined,
  };
}

async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Step 4: the transaction; the email it queued, if any. */
function applyOrder(pool: pg.Pool, identity: string[], order: Order | undefined) {
  return inTransaction(pool, async (tx): Promise<QueuedMail | undefined> => {
    await tx.query(FORGET_ATTEMPTS, identity);
    if ((await tx.query(RECORD_EVENT, identity)).rowCount === 0) return undefined;
    if (order === undefined) return undefined;
    const state = [order.salesOrder, order.portalStatus, order.requestedDeliveryDate];
    const upserted = await tx.query(UPSERT_STATUS, [
      ...state,
      order.soldToParty,
      order.customerReference,
      order.changedAt,
    ]);
    if (upserted.rowCount === 0) return undefined;
    const messageId = `<${randomUUID()}@plain.bench>`;
    const noted = await tx.query<
      Pick<QueuedMail, 'previousPortalStatus' | 'previousRequestedDeliveryDate' | 'inReplyTo'>
    >(NOTE_CHANGE, [...state, messageId]);
    const change = noted.rows[0];
    if (change === undefined) return undefined;
    const queued = await tx.query<QueuedMail>(QUEUE_MAIL, [
      ...state,
      order.soldToParty,
      order.customerReference,
      MAIL_TO,
      messageId,
      change.previousPortalStatus,
      change.previousRequestedDeliveryDate,
      change.inReplyTo,
    ]);
    return queued.rows[0];
  });
}

/** Steps 2–4 for one delivery: how to settle it, and the email its transaction queued, if any. */
async function handle(
  pool: pg.Pool,
  s4Url: string,
  event: PlainEvent,
): Promise<{ settle: 'accept' | 'reject'; mail?: QueuedMail | undefined }> {
  const identity = [event.source, event.id];
  const { rows } = await pool.query<{ processed: boolean; attempts: number }>(CHECK_IDENTITY, identity);
  const inbox = rows[0] as { processed: boolean; attempts: number };
  if (inbox.processed) return { settle: 'accept' };
  if (inbox.attempts > MAX_DELIVERIES) return { settle: 'reject' };
  const order = event.salesOrder === undefined ? undefined : await readOrder(s4Url, event.salesOrder);
  return { settle: 'accept', mail: await applyOrder(pool, identity, order) };
}

/** Step 6, bounded: `send` starts a send; `room` resolves once fewer than `limit` are in flight. */
function mailQueue(pool: pg.Pool, mailer: Mailer, limit: number) {
  let inFlight = 0;
  const waiting: Array<() => void> = [];
  return {
    async room(): Promise<void> {
      while (inFlight >= limit) await new Promise<void>((wake) => waiting.push(wake));
    },
    async send(mail: QueuedMail): Promise<void> {
      inFlight++;
      try {
        await mailer.send(renderEmail(mail));
        await pool.query(MARK_SENT, [mail.id]);
      } catch (err) {
        // Left unsent in the outbox: the next start sends it.
        console.error(`email ${mail.id} not sent: ${(err as Error).message}`);
      } finally {
        inFlight--;
        waiting.shift()?.();
      }
    },
  };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string' },
      's4-url': { type: 'string' },
      'smtp-url': { type: 'string' },
      queue: { type: 'string' },
      'amqp-host': { type: 'string', default: '127.0.0.1' },
      'amqp-port': { type: 'string', default: '5672' },
      prefetch: { type: 'string', default: String(PLAIN_PREFETCH) },
    },
  });
  const databaseUrl = values['database-url'];
  const s4Url = values['s4-url'];
  const smtpUrl = values['smtp-url'];
  const queue = values.queue;
  if (databaseUrl === undefined || s4Url === undefined || smtpUrl === undefined || queue === undefined) {
    throw new Error('--database-url, --s4-url, --smtp-url and --queue are required');
  }
  const prefetch = Number(values.prefetch);
  // As many connections as messages in flight: no event waits for a connection.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: prefetch });
  const mailer = smtpMailer(smtpUrl);
  const mails = mailQueue(pool, mailer, MAX_MAILS_IN_FLIGHT);
  const client = new Client({
    net: { host: values['amqp-host'], port: Number(values['amqp-port']) },
    sasl: { mechanism: 'PLAIN', user: 'guest', password: 'guest' },
    tune: { socketNoDelay: true },
    // The session window bounds unsettled messages; the link credit never runs out before it.
    amqp: {
      incomingSessionWindow: prefetch,
      maxReceiverLinkCredit: prefetch,
      minReceiverLinkCredit: Math.max(1, prefetch >> 1),
    },
  });
  const session = client.session('');
  // The client renews the session window only once three quarters of it are settled, so intake would come in
  // waves; renewed after every tenth settlement, the broker keeps the window about full.
  let settledSinceRenewal = 0;
  const settled = () => {
    if (++settledSinceRenewal < Math.ceil(prefetch / 10)) return;
    settledSinceRenewal = 0;
    session.flow(prefetch);
  };
  const onMessage = async (message: IncomingMessage) => {
    let event: PlainEvent;
    try {
      event = parse(Buffer.concat(message.payload.chunks ?? []));
    } catch (err) {
      // Never in the benchmark's load; a plain consumer would dead-letter it.
      message.failed(err as Error);
      settled();
      return;
    }
    await mails.room();
    try {
      const { settle, mail } = await handle(pool, s4Url, event);
      if (settle === 'accept') message.done();
      else message.failed(new Error('delivery limit reached'));
      settled();
      if (mail !== undefined) void mails.send(mail);
    } catch (err) {
      console.error(`event ${event.id} released: ${(err as Error).message}`);
      message.failed();
      settled();
    }
  };
  client.on('error', (err: Error) => console.error(`AMQP error: ${err.message}`));
  client
    .receiver('plain-consumer')
    .attach(queue)
    .on('data', (message: IncomingMessage) => void onMessage(message))
    .on('subscribed', () => console.log('attached'));
  void pool
    .query<QueuedMail>(UNSENT_MAILS)
    .then(async ({ rows }) => {
      for (const mail of rows) await mails.send(mail);
    })
    .finally(() => client.connect());
  process.once('SIGTERM', () => {
    // Disconnecting returns anything unsettled to the queue.
    client.disconnect();
    mailer.close();
    void pool.end().finally(() => process.exit(0));
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
