// The broker ceiling: how fast this machine's RabbitMQ hands messages to the service's AMQP 1.0 client with
// the service's flow-control settings, when the consumer does nothing but accept. No service can go faster.
import { Client, type IncomingMessage } from '@sap/xb-msg-amqp-v100';
import type { AmqpSettings } from '../src/config/brokerConfig.js';
import { amqpClientOptions } from '../src/messaging/amqpClientOptions.js';
import { sessionWindow } from '../src/messaging/sessionWindow.js';
import { machineBusySeconds } from './processStats.js';

export interface BrokerCeiling {
  messagesPerSecond: number;
  messages: number;
  /** Busy CPU of the whole machine (RabbitMQ, this consumer, anything else) per 1,000 messages. */
  machineCpuSecondsPer1000: number;
}

/**
 * Drains `expected` messages already in the queue at `address` with a bare consumer that settles each as
 * accepted on arrival. Timed from the first to the last message, so connecting and attaching are not counted.
 */
export async function measureBrokerCeiling(
  settings: AmqpSettings,
  expected: number,
  timeoutMs: number,
): Promise<BrokerCeiling> {
  const amqp = new Client(amqpClientOptions(settings));
  let received = 0;
  let first = 0;
  let last = 0;
  let busyAtFirst = 0;
  let busy = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`bare consumer took ${received} of ${expected} messages in ${timeoutMs} ms`)),
        timeoutMs,
      );
      amqp.on('error', (err: Error) => {
        clearTimeout(timer);
        reject(err);
      });
      const window = sessionWindow(amqp.session(''), settings.prefetch);
      amqp
        .receiver('fon-bench-ceiling')
        .attach(settings.queue)
        .on('data', (message: IncomingMessage) => {
          const now = performance.now();
          if (received === 0) {
            first = now;
            busyAtFirst = machineBusySeconds();
          }
          last = now;
          message.done();
          window.settled();
          if (++received === expected) {
            busy = machineBusySeconds() - busyAtFirst;
            clearTimeout(timer);
            resolve();
          }
        });
      amqp.connect();
    });
  } finally {
    amqp.disconnect();
  }
  return {
    messagesPerSecond: (received - 1) / ((last - first) / 1000),
    messages: received,
    machineCpuSecondsPer1000: (busy / (received - 1)) * 1000,
  };
}
