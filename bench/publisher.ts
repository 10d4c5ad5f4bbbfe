import rhea, { type Connection, type Sender } from 'rhea';
import { openRheaConnection } from '../test/support/broker.js';
import { type BenchEvent, renderEvent } from './workload.js';

export interface BenchPublisher {
  /** Publishes every event as fast as the broker's credit allows; resolves once the broker accepted all. */
  publish(address: string, events: BenchEvent[]): Promise<void>;
  /** Publishes at a steady rate (events per second); resolves once the broker accepted all. */
  publishSteadily(address: string, events: BenchEvent[], perSecond: number): Promise<void>;
  close(): Promise<void>;
}

export async function openPublisher(host: string, port: number): Promise<BenchPublisher> {
  const connection: Connection = await openRheaConnection('fon-bench', host, port);

  /** Opens a sender and counts the broker's outcomes; `sent()` tells how many have been handed over. */
  async function openSender(address: string, total: number) {
    const sender: Sender = connection.open_sender({ target: { address } });
    await new Promise<void>((resolve) => sender.once('sendable', () => resolve()));
    let confirmed = 0;
    let refused = 0;
    const done = new Promise<void>((resolve, reject) => {
      const settled = (ok: boolean) => () => {
        if (ok) confirmed++;
        else refused++;
        if (confirmed + refused === total) {
          sender.close();
          if (refused > 0) reject(new Error(`the broker refused ${refused} of ${total} messages`));
          else resolve();
        }
      };
      sender.on('accepted', settled(true));
      for (const outcome of ['rejected', 'released', 'modified']) sender.on(outcome, settled(false));
      if (total === 0) resolve();
    });
    const send = (event: BenchEvent) => {
      if (event.body === undefined) {
        event.publishedAt = Date.now();
        event.body = renderEvent(event, event.publishedAt);
      }
      sender.send({
        body: rhea.message.data_section(event.body),
        content_type: 'application/json',
        durable: true,
      });
    };
    return { sender, send, done };
  }

  return {
    async publish(address, events) {
      const { sender, send, done } = await openSender(address, events.length);
      let next = 0;
      const pump = () => {
        while (next < events.length && sender.sendable()) send(events[next++] as BenchEvent);
      };
      sender.on('sendable', pump);
      pump();
      await done;
    },
    async publishSteadily(address, events, perSecond) {
      const { sender, send, done } = await openSender(address, events.length);
      const started = Date.now();
      let next = 0;
      await new Promise<void>((resolve) => {
        // Every few milliseconds, send what is due by now: the rate holds even when a tick comes late.
        const tick = () => {
          const due = Math.min(events.length, Math.floor(((Date.now() - started) * perSecond) / 1000) + 1);
          while (next < due && sender.sendable()) send(events[next++] as BenchEvent);
          if (next < events.length) setTimeout(tick, 2);
          else resolve();
        };
        tick();
      });
      await done;
    },
    async close() {
      connection.close();
      await new Promise<void>((resolve) => connection.once('connection_close', () => resolve()));
    },
  };
}
