// The plain consumer the service is measured against: what a careful team writes first for the same contract,
// the simplest correct way. The same AMQP client and flow control as the service, `prefetch` messages in flight,
// and for each one:
// 1. parse the JSON;
// 2. one statement: is the event (source, id) processed? if not, count this delivery (plainTables.ts says why);
//    processed: a duplicate, accepted; past the delivery limit: rejected to the dead-letter queue;
// 3. one GET of the order from S/4HANA (the service's OData V2 URL);
// 4. ONE transaction: forget the event's count, record the event, upsert the portal row unless the stored state is newer,
//    note the (status, date) pair in the ledger and, only when that pair changed, queue the email in the outbox;
// 5. accept the message after the commit;
// 6. send the queued email through the same SMTP relay as the service and mark it sent (at start, the emails a
//    stopped process left unsent go first).
// Usage (a process of its own, so that its CPU and memory are its own):
//   node --import tsx bench/plainConsumer.ts --database-url URL --s4-url URL --smtp-url URL --queue ADDRESS
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, type IncomingMessage } from '@sap/xb-msg-amqp-v100';
import pg from 'pg';
import { withTransaction } from '../src/db/transaction.js';
import { renderEmail } from '../src/families/salesOrder/email.js';
import { toSalesOrder } from '../src/families/salesOrder/entity.js';
import { odataV2 } from '../src/families/salesOrder/services.js';
import { type PortalOrder, toPortalOrder } from '../src/families/salesOrder/state.js';
import { amqpClientOptions } from '../src/messaging/amqpClientOptions.js';
import { sessionWindow } from '../src/messaging/sessionWindow.js';
import type { OutboxMail } from '../src/notifications/mailOutbox.js';
import { type MailTransport, smtpTransport } from '../src/notifications/mailTransport.js';
import {
  CHECK_IDENTITY,
  FORGET_ATTEMPTS,
  MARK_SENT,
  NOTE_CHANGE,
  QUEUE_MAIL,
  RECORD_EVENT,
  UNSENT_MAILS,
  UPSERT_STATUS,
} from './plainTables.js';

export const PLAIN_PREFETCH = 50;
// The service's defaults (MAX_DELIVERIES, MAIL_TO, MAIL_FROM, MAIL_LOCALE in the bench's service environment).
const MAX_DELIVERIES = 10;
const MAIL = { to: ['fleet-manager@fleet.example'], from: 'notifier@fleet.example', locale: 'en' };

interface PlainEvent {
  source: string;
  id: string;
  salesOrder: string | undefined;
}

type QueuedMail = Pick<
  OutboxMail,
  | 'id'
  | 'salesOrder'
  | 'portalStatus'
  | 'requestedDeliveryDate'
  | 'soldToParty'
  | 'customerReference'
  | 'recipients'
  | 'messageId'
  | 'previousPortalStatus'
  | 'previousRequestedDeliveryDate'
  | 'inReplyTo'
>;

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

async function readOrder(s4Url: string, salesOrder: string): Promise<PortalOrder> {
  const url = new URL(odataV2.entityPath(salesOrder), s4Url);
  for (const [key, value] of Object.entries(odataV2.query)) url.searchParams.set(key, value);
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`S/4HANA answered ${response.status} for ${salesOrder}`);
  const entity = odataV2.entity(await response.json());
  return toPortalOrder(toSalesOrder(entity, salesOrder, odataV2.time), new Date());
}

/** Steps 2–4 for one delivery: how to settle it, and the email its transaction queued, if any. */
async function handle(
  pool: pg.Pool,
  s4Url: string,
  event: PlainEvent,
): Promise<{ settle: 'accept' | 'reject'; mail?: QueuedMail }> {
  const identity = [event.source, event.id];
  const { rows } = await pool.query<{ processed: boolean; attempts: number }>(CHECK_IDENTITY, identity);
  const inbox = rows[0] as { processed: boolean; attempts: number };
  if (inbox.processed) return { settle: 'accept' };
  if (inbox.attempts > MAX_DELIVERIES) return { settle: 'reject' };
  const order = event.salesOrder === undefined ? undefined : await readOrder(s4Url, event.salesOrder);
  const mail = await withTransaction(pool, async (tx) => {
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
      MAIL.to,
      messageId,
      change.previousPortalStatus,
      change.previousRequestedDeliveryDate,
      change.inReplyTo,
    ]);
    return queued.rows[0];
  });
  return mail === undefined ? { settle: 'accept' } : { settle: 'accept', mail };
}

/** Step 6: one email, rendered as the service renders its outbox rows, then marked sent. */
async function send(pool: pg.Pool, transport: MailTransport, mail: QueuedMail): Promise<void> {
  await transport.send(
    renderEmail(
      {
        ...mail,
        attempts: 0,
        change: mail.previousPortalStatus === null ? 'new' : 'changed',
        locale: null,
        traceParent: null,
        nextPending: false,
      },
      MAIL,
    ),
  );
  await pool.query(MARK_SENT, [mail.id]);
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
  const transport = smtpTransport(smtpUrl);
  const sendLogged = (mail: QueuedMail) =>
    send(pool, transport, mail).catch((err: unknown) => {
      // Left unsent in the outbox: the next start sends it.
      console.error(`email ${mail.id} not sent: ${(err as Error).message}`);
    });
  const client = new Client(
    amqpClientOptions({
      broker: {
        kind: 'plain',
        host: values['amqp-host'],
        port: Number(values['amqp-port']),
        tls: false,
        user: 'guest',
        password: 'guest',
      },
      queue,
      prefetch,
    }),
  );
  const window = sessionWindow(client.session(''), prefetch);
  const onMessage = (message: IncomingMessage) => {
    let event: PlainEvent;
    try {
      event = parse(Buffer.concat(message.payload.chunks ?? []));
    } catch (err) {
      // Never in the benchmark's load; a plain consumer would dead-letter it.
      message.failed(err as Error);
      window.settled();
      return;
    }
    handle(pool, s4Url, event).then(
      ({ settle, mail }) => {
        if (settle === 'accept') message.done();
        else message.failed(new Error('delivery limit reached'));
        window.settled();
        if (mail !== undefined) void sendLogged(mail);
      },
      (err: unknown) => {
        console.error(`event ${event.id} released: ${(err as Error).message}`);
        message.failed();
        window.settled();
      },
    );
  };
  client
    .on('error', (err: Error) => console.error(`AMQP error: ${err.message}`))
    .on('disconnected', () => window.close());
  client
    .receiver('plain-consumer')
    .attach(queue)
    .on('data', onMessage)
    .on('subscribed', () => console.log('attached'));
  void pool
    .query<QueuedMail>(UNSENT_MAILS)
    .then(async ({ rows }) => {
      for (const mail of rows) await sendLogged(mail);
    })
    .finally(() => client.connect());
  process.once('SIGTERM', () => {
    // Disconnecting returns anything unsettled to the queue.
    client.disconnect();
    transport.close();
    void pool.end().finally(() => process.exit(0));
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
