// The plain consumer the service is measured against: what a careful team writes first for the same contract.
// The same AMQP client and flow control as the service, `prefetch` messages in flight, and for each one: parse the
// JSON, one GET of the order from S/4HANA (the service's OData V2 URL), then ONE transaction that records the
// event's identity, upserts the portal row and queues an email when the status changed; the message is accepted
// after the commit. A duplicate finds its identity recorded, commits nothing else and is accepted.
// Usage (a process of its own, so that its CPU and memory are its own):
//   node --import tsx bench/plainConsumer.ts --database-url URL --s4-url URL --queue ADDRESS [--prefetch 50]
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, type IncomingMessage } from '@sap/xb-msg-amqp-v100';
import pg from 'pg';
import { portalStatusOf } from '../src/families/salesOrder/portalStatus.js';
import { toSalesOrder } from '../src/families/salesOrder/salesOrder.js';
import { odataV2 } from '../src/families/salesOrder/salesOrderServices.js';
import { amqpClientOptions } from '../src/messaging/amqpClientOptions.js';
import { sessionWindow } from '../src/messaging/sessionWindow.js';

export const PLAIN_PREFETCH = 50;

export const CREATE_PLAIN_TABLES = `
create table if not exists plain_processed_event (
  source text not null,
  id text not null,
  processed_at timestamptz not null default now(),
  primary key (source, id)
);
create table if not exists plain_portal_status (
  sales_order text primary key,
  portal_status text not null
);
create table if not exists plain_mail_outbox (
  id bigint generated always as identity primary key,
  sales_order text not null,
  portal_status text not null
)`;

export const TRUNCATE_PLAIN_TABLES = 'truncate plain_processed_event, plain_portal_status, plain_mail_outbox';

// The upsert returns a row only when the row is new or its status changed: that is when an email is due.
const RECORD_EVENT = `insert into plain_processed_event (source, id) values ($1::text, $2::text)
  on conflict do nothing returning id`;
const UPSERT_STATUS = `insert into plain_portal_status (sales_order, portal_status) values ($1::text, $2::text)
  on conflict (sales_order) do update set portal_status = excluded.portal_status
  where plain_portal_status.portal_status is distinct from excluded.portal_status
  returning sales_order as "salesOrder"`;
const QUEUE_MAIL = `insert into plain_mail_outbox (sales_order, portal_status) values ($1::text, $2::text)`;

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

async function readStatus(s4Url: string, salesOrder: string): Promise<string> {
  const url = new URL(odataV2.entityPath(salesOrder), s4Url);
  for (const [key, value] of Object.entries(odataV2.query)) url.searchParams.set(key, value);
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`S/4HANA answered ${response.status} for ${salesOrder}`);
  const entity = odataV2.entity(await response.json());
  return portalStatusOf(toSalesOrder(entity, salesOrder, odataV2.time));
}

async function handle(pool: pg.Pool, s4Url: string, event: PlainEvent): Promise<void> {
  const status = event.salesOrder === undefined ? undefined : await readStatus(s4Url, event.salesOrder);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const recorded = await client.query(RECORD_EVENT, [event.source, event.id]);
    if (recorded.rowCount === 1 && event.salesOrder !== undefined && status !== undefined) {
      const changed = await client.query(UPSERT_STATUS, [event.salesOrder, status]);
      if (changed.rowCount === 1) await client.query(QUEUE_MAIL, [event.salesOrder, status]);
    }
    await client.query('commit');
    client.release();
  } catch (err) {
    await client.query('rollback').catch(() => {});
    client.release(true);
    throw err;
  }
}

function main(): void {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string' },
      's4-url': { type: 'string' },
      queue: { type: 'string' },
      'amqp-host': { type: 'string', default: '127.0.0.1' },
      'amqp-port': { type: 'string', default: '5672' },
      prefetch: { type: 'string', default: String(PLAIN_PREFETCH) },
    },
  });
  const databaseUrl = values['database-url'];
  const s4Url = values['s4-url'];
  const queue = values.queue;
  if (databaseUrl === undefined || s4Url === undefined || queue === undefined) {
    throw new Error('--database-url, --s4-url and --queue are required');
  }
  const prefetch = Number(values.prefetch);
  // As many connections as messages in flight: no event waits for a connection.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: prefetch });
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
      () => {
        message.done();
        window.settled();
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
  client.connect();
  process.once('SIGTERM', () => {
    // Disconnecting returns anything unsettled to the queue.
    client.disconnect();
    void pool.end().finally(() => process.exit(0));
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
