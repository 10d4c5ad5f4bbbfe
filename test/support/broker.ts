// The broker from the outside: queues declared and inspected over AMQP 0-9-1 (amqplib), events published
// over AMQP 1.0 by an independent client (rhea), never through the service's own code.
import { randomBytes } from 'node:crypto';
import amqplib from 'amqplib';
import rhea, { type Connection } from 'rhea';
import { isIdle, queueCounts } from './queueCounts.js';
import { AMQP_HOST, AMQP_PORT, AMQP_URL } from './services.js';

export interface TestQueue {
  name: string;
  deadLetterName: string;
  /** The AMQP 1.0 address the service consumes from. */
  address: string;
  /** Messages ready in the queue (not those a consumer holds unsettled). */
  depth(): Promise<number>;
  /** Whether nothing is ready and nothing is held unsettled by a consumer: every message is settled for good. */
  isIdle(): Promise<boolean>;
  /** Takes every message from the dead-letter queue. */
  drainDeadLetters(): Promise<Array<{ body: string; contentType: string | undefined }>>;
  /** Drops every ready message. */
  purge(): Promise<void>;
  delete(): Promise<void>;
}

/** A durable queue whose rejected messages go to `<name>.dlq`, as the service is deployed against. */
export async function createTestQueue(
  prefix = 'fon-test',
  extraArguments: Record<string, unknown> = {},
): Promise<TestQueue> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  const deadLetterName = `${name}.dlq`;
  const connection = await amqplib.connect(AMQP_URL);
  const channel = await connection.createChannel();
  await channel.assertQueue(deadLetterName, { durable: true });
  await channel.assertQueue(name, {
    durable: true,
    arguments: {
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': deadLetterName,
      ...extraArguments,
    },
  });
  return {
    name,
    deadLetterName,
    address: `/amq/queue/${name}`,
    depth: async () => (await channel.checkQueue(name)).messageCount,
    isIdle: async () => isIdle(await queueCounts(name)),
    async drainDeadLetters() {
      const letters: Array<{ body: string; contentType: string | undefined }> = [];
      for (;;) {
        const message = await channel.get(deadLetterName, { noAck: true });
        if (message === false) return letters;
        letters.push({ body: message.content.toString('utf8'), contentType: message.properties.contentType });
      }
    },
    async purge() {
      await channel.purgeQueue(name);
    },
    async delete() {
      await channel.deleteQueue(name);
      await channel.deleteQueue(deadLetterName);
      await connection.close();
    },
  };
}

export interface OutgoingEvent {
  body: string | Buffer;
  contentType?: string;
  /** AMQP application-properties, e.g. `cloudEvents:id` for binary mode. */
  properties?: Record<string, unknown>;
}

export interface Publisher {
  send(address: string, events: OutgoingEvent[]): Promise<void>;
  close(): Promise<void>;
}

/** An open AMQP 1.0 connection of rhea: a client independent of the service's own. */
export async function openRheaConnection(
  idPrefix: string,
  host = AMQP_HOST,
  port = AMQP_PORT,
): Promise<Connection> {
  const container = rhea.create_container({ id: `${idPrefix}-${randomBytes(3).toString('hex')}` });
  const connection = container.connect({
    host,
    port,
    username: 'guest',
    password: 'guest',
    reconnect: false,
  });
  await new Promise<void>((resolve, reject) => {
    connection.once('connection_open', () => resolve());
    connection.once('connection_error', (context) => reject(context.connection.error));
    connection.once('disconnected', (context) =>
      reject(context.error ?? new Error('AMQP 1.0 connection lost')),
    );
  });
  return connection;
}

/** Publishes over AMQP 1.0 with rhea and resolves once the broker has accepted every message. */
export async function createPublisher(): Promise<Publisher> {
  const connection = await openRheaConnection('fon-test-publisher');
  return {
    async send(address, events) {
      const sender = connection.open_sender({ target: { address } });
      await new Promise<void>((resolve) => sender.once('sendable', () => resolve()));
      const pending = new Map<unknown, { resolve: () => void; reject: (err: Error) => void }>();
      const onSettled = (context: rhea.EventContext) => {
        const waiter = pending.get(context.delivery);
        pending.delete(context.delivery);
        if (context.delivery?.remote_state?.constructor?.name === 'Rejected')
          waiter?.reject(new Error('broker rejected'));
        else waiter?.resolve();
      };
      sender.on('accepted', onSettled);
      sender.on('rejected', onSettled);
      await Promise.all(
        events.map((event) => {
          const body = typeof event.body === 'string' ? Buffer.from(event.body, 'utf8') : event.body;
          const delivery = sender.send({
            body: rhea.message.data_section(body),
            content_type: event.contentType ?? 'application/json',
            durable: true,
            application_properties: event.properties,
          });
          return new Promise<void>((resolve, reject) => pending.set(delivery, { resolve, reject }));
        }),
      );
      sender.close();
    },
    async close() {
      connection.close();
      await new Promise<void>((resolve) => connection.once('connection_close', () => resolve()));
    },
  };
}
