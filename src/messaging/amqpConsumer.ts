// The AMQP 1.0 edge: the connection's life (connect, attach, reconnect with backoff, stop). Each message is
// received and settled exactly once by amqpReceive.ts; nothing here decides an outcome: that is handleEvent's job.
import { setMaxListeners } from 'node:events';
import { Client, type IncomingMessage } from '@sap/xb-msg-amqp-v100';
import type { Logger } from 'pino';
import type { AmqpSettings } from '../config/brokerConfig.js';
import type { HandleEvent } from '../events/outcome.js';
import { amqpClientOptions } from './amqpClientOptions.js';
import { amqpReceiver } from './amqpReceive.js';
import { connectFailureReason } from './connectFailure.js';
import { adaptiveWindow, fixedWindow } from './creditWindow.js';
import { type SessionWindow, sessionWindow } from './sessionWindow.js';

export interface AmqpConsumerOptions {
  /**
   * The broker, the queue to consume, and AMQP_PREFETCH: the most unsettled messages at once, the session window
   * renewed on settling; unset, the window adapts (creditWindow.ts).
   */
  amqp: AmqpSettings;
  handle: HandleEvent;
  logger: Logger;
  onReconnect?: () => void;
}

export interface AmqpConsumer {
  start(): void;
  /** Stops taking messages, gives those in flight up to `graceMs` to finish (or be released), then disconnects. */
  stop(graceMs: number): Promise<void>;
  isAttached(): boolean;
  /** The credit window: the most unsettled messages the broker may send now. */
  creditWindow(): number;
}

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

export function createAmqpConsumer(options: AmqpConsumerOptions): AmqpConsumer {
  const { logger, handle } = options;
  const { prefetch } = options.amqp;
  // One for the consumer's life, so that what it learned outlives a reconnect.
  const window = prefetch === undefined ? adaptiveWindow(() => performance.now()) : fixedWindow(prefetch);
  const inFlight = new Set<Promise<void>>();
  // Aborting ends retry waits at once, so in-flight messages are released quickly on shutdown.
  const stopping = new AbortController();
  // Every in-flight message may wait on it (retry delays, release pauses); the session window bounds them.
  setMaxListeners(0, stopping.signal);
  let client: Client | undefined;
  let attached = false;
  // Connections in a row that ended before settling anything: the backoff exponent. Counting from the attach
  // alone would let a message the client cannot take (say, over its 16 MiB frame limit) bounce the link
  // several times a second forever.
  let failedConnects = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  const receive = amqpReceiver({
    handle,
    logger,
    signal: stopping.signal,
    onSettled: () => {
      failedConnects = 0;
    },
  });

  function onMessage(message: IncomingMessage, session: SessionWindow): void {
    let bytes = 0;
    for (const chunk of message.payload.chunks ?? []) bytes += chunk.length;
    session.received(bytes);
    if (stopping.signal.aborted) {
      message.failed(); // arrived after shutdown began: hand it straight back
      session.settled();
      return;
    }
    const work = receive(message, session);
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

  function connect(): void {
    // The session opens with the window as it is now, which sessionWindow() below takes as granted.
    const next = new Client(amqpClientOptions(options.amqp, window.current()));
    client = next;
    next
      .on('connected', () => logger.info('AMQP connected'))
      .on('error', (err: Error) => {
        // Errors of a session or link (e.g. the queue does not exist yet) end the receiver for good, and the
        // client reports them here. As in the library's own examples, drop the connection: the reconnect below
        // attaches again, so consuming resumes as soon as the cause is gone. Unsettled messages are redelivered.
        logger.error(
          { err, reason: connectFailureReason(err), address: options.amqp.queue },
          'AMQP error; reconnecting',
        );
        attached = false;
        if (!stopping.signal.aborted) next.disconnect();
      })
      .on('disconnected', () => {
        attached = false;
        if (stopping.signal.aborted || client !== next) return;
        // This client does not reconnect by itself: capped exponential backoff with full jitter.
        const delay = Math.random() * Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** failedConnects++);
        logger.warn({ delayMs: Math.round(delay) }, 'AMQP disconnected; reconnecting');
        options.onReconnect?.();
        // A new client each time: reusing one piles up listeners on its receiver with every reconnect.
        reconnectTimer = setTimeout(connect, delay);
      });
    // Per connection: the messages of a lost one are redelivered, and settling them renews nothing.
    const session = sessionWindow(next.session(''), window);
    next.on('disconnected', session.close);
    next
      .receiver('fleet-order-notifier')
      .attach(options.amqp.queue)
      .on('subscribed', () => {
        attached = true;
        logger.info({ address: options.amqp.queue }, 'AMQP receiver attached');
      })
      .on('data', (message: IncomingMessage) => onMessage(message, session))
      .on('error', (err: Error) => logger.warn({ err }, 'AMQP receiver stream error'));
    next.connect();
  }

  return {
    start: connect,
    async stop(graceMs) {
      stopping.abort();
      clearTimeout(reconnectTimer);
      const grace = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
      await Promise.race([Promise.allSettled([...inFlight]), grace]);
      // Disconnecting (not detaching) returns anything still unsettled to the queue; a detach would reject it.
      client?.disconnect();
      attached = false;
    },
    isAttached: () => attached,
    creditWindow: () => window.current(),
  };
}
