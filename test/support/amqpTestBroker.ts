// A one-queue AMQP 1.0 broker in the test process (rhea as a server), for settlement semantics the local
// RabbitMQ cannot show. Consumers attach a receiver to `address`; each message goes to one consumer at a time,
// as link credit and the session window allow. What the broker does with each outcome:
// - `accepted`: the message is gone.
// - `released` (and `modified`): sent again at once, not counted, as Event Mesh treats a release.
// - `rejected`: with `rejected: 'dead-letter'`, moved to the dead-message queue at once (RabbitMQ with a
//   dead-letter target); with `rejected: 'redeliver'`, sent again and counted toward `maxRedeliveryCount`,
//   past which it moves to the dead-message queue, and `0` means forever (SAP Event Mesh as SAP documents it).
// - unsettled when its connection ends: sent again, not counted.
// Messages are published through `publish`, not over AMQP: the broker's intake is not what these tests test.
import type { AddressInfo, Server, Socket } from 'node:net';
import rhea, { type Delivery, type EventContext, type Sender } from 'rhea';

export interface AmqpTestBrokerOptions {
  rejected: 'dead-letter' | 'redeliver';
  /** Redeliveries of a rejected message before it moves to the dead-message queue; 0 (the default) is forever. */
  maxRedeliveryCount?: number;
}

export interface PublishedMessage {
  body: string | Buffer;
  contentType?: string;
  /** AMQP application-properties, e.g. `cloudEvents:id` for binary mode. */
  properties?: Record<string, unknown>;
}

export type Settlement = 'accepted' | 'released' | 'rejected' | 'modified' | 'connection lost';

/** One published message and what became of it so far. */
export interface BrokerMessage {
  readonly body: Buffer;
  /** Times it was sent to a consumer. */
  readonly deliveries: number;
  /** How each delivery ended, in order; a delivery still unsettled has no entry yet. */
  readonly settlements: readonly Settlement[];
  readonly state: 'ready' | 'delivered' | 'accepted' | 'dead-lettered';
}

export interface AmqpTestBroker {
  /** `amqp://guest:guest@127.0.0.1:<port>`: any user name and password are taken. */
  url: string;
  /** The queue's address for a receiver; any address attaches to the one queue. */
  address: string;
  publish(messages: PublishedMessage[]): BrokerMessage[];
  /** Every message published, in order. */
  messages(): readonly BrokerMessage[];
  /** Whether every message is accepted or dead-lettered: nothing ready, nothing unsettled. */
  isIdle(): boolean;
  close(): Promise<void>;
}

interface Tracked extends PublishedMessage {
  body: Buffer;
  deliveries: number;
  redeliveries: number;
  settlements: Settlement[];
  state: BrokerMessage['state'];
}

export async function startAmqpTestBroker(options: AmqpTestBrokerOptions): Promise<AmqpTestBroker> {
  const maxRedeliveryCount = options.maxRedeliveryCount ?? 0;
  const all: Tracked[] = [];
  const ready: Tracked[] = [];
  const consumers = new Set<Sender>();
  const inFlight = new Map<Delivery, Tracked>();

  const container = rhea.create_container({ id: 'fon-test-broker' });
  container.sasl_server_mechanisms.enable_plain(() => true);

  function pump(): void {
    for (const sender of consumers) {
      while (ready.length > 0 && sender.sendable()) {
        const message = ready.shift() as Tracked;
        message.state = 'delivered';
        const delivery = sender.send({
          durable: true,
          delivery_count: message.deliveries,
          first_acquirer: message.deliveries === 0,
          body: rhea.message.data_section(message.body),
          content_type: message.contentType ?? 'application/json',
          application_properties: message.properties,
        });
        message.deliveries++;
        inFlight.set(delivery, message);
      }
    }
  }

  function settled(delivery: Delivery | undefined, how: Settlement): void {
    const message = delivery && inFlight.get(delivery);
    if (delivery === undefined || message === undefined) return;
    inFlight.delete(delivery);
    message.settlements.push(how);
    if (how === 'accepted') message.state = 'accepted';
    else if (how === 'rejected' && deadLettered(message)) message.state = 'dead-lettered';
    else {
      // Sent again at the head of the queue, as a broker redelivers at once.
      message.state = 'ready';
      ready.unshift(message);
    }
    pump();
  }

  function deadLettered(message: Tracked): boolean {
    if (options.rejected === 'dead-letter') return true;
    message.redeliveries++;
    return maxRedeliveryCount > 0 && message.redeliveries > maxRedeliveryCount;
  }

  container.on('sender_open', (context: EventContext) => {
    consumers.add(context.sender as Sender);
    pump();
  });
  container.on('sendable', () => pump());
  for (const how of ['accepted', 'released', 'rejected', 'modified'] as const) {
    container.on(how, (context: EventContext) => settled(context.delivery, how));
  }
  const forget = (context: EventContext) => {
    for (const delivery of [...inFlight.keys()]) {
      if (delivery.link.connection === context.connection) settled(delivery, 'connection lost');
    }
    for (const sender of consumers) if (sender.connection === context.connection) consumers.delete(sender);
  };
  container.on('disconnected', forget);
  container.on('connection_close', forget);
  container.on('sender_close', (context: EventContext) => consumers.delete(context.sender as Sender));
  container.on('error', () => {
    // A consumer's protocol error ends its connection; 'disconnected' returns its messages.
  });

  const server: Server = container.listen({ port: 0, host: '127.0.0.1' });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;

  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    address: 'orders',
    publish(messages) {
      const added = messages.map((message) => {
        const body = typeof message.body === 'string' ? Buffer.from(message.body, 'utf8') : message.body;
        const tracked: Tracked = {
          ...message,
          body,
          deliveries: 0,
          redeliveries: 0,
          settlements: [],
          state: 'ready',
        };
        all.push(tracked);
        ready.push(tracked);
        return tracked;
      });
      pump();
      return added;
    },
    messages: () => all,
    isIdle: () => all.every((message) => message.state === 'accepted' || message.state === 'dead-lettered'),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
