// The AMQP 1.0 edge: connect, keep connected, receive, and settle every message exactly once.
// Settlement: accept → `accepted`; release → `released` (redelivered); reject → `rejected` once refused
// (refuse.ts), `accepted` when refused before, `released` while its dead letter cannot be stored.
// Nothing here decides an outcome: that is handleEvent's and refuse's job.
import { setMaxListeners } from 'node:events';
import { Client, type IncomingMessage } from '@sap/xb-msg-amqp-v100';
import type { Logger } from 'pino';
import type { AmqpSettings } from '../config/brokerConfig.js';
import type { HandleEvent } from '../events/handleEvent.js';
import type { Refuse } from '../events/refuse.js';
import { amqpClientOptions } from './amqpClientOptions.js';
import { deadLetterOf, toInbound } from './amqpMessage.js';
import { connectFailureReason } from './connectFailure.js';
import { releasePause } from './releasePause.js';
import { type SessionWindow, sessionWindow } from './sessionWindow.js';

export interface AmqpConsumerOptions {
  /**
   * The broker, the queue to consume, and AMQP_PREFETCH: the most unsettled messages at once, the session window
   * renewed on settling.
   */
  amqp: AmqpSettings;
  handle: HandleEvent;
  /**
   * Stores a refused message (src/events/refuse.ts): rejected once refused, accepted when refused before,
   * released to retry later.
   */
  refuse: Refuse;
  logger: Logger;
  onReconnect?: () => void;
}

export interface AmqpConsumer {
  start(): void;
  /** Stops taking messages, gives those in flight up to `graceMs` to finish (or be released), then disconnects. */
  stop(graceMs: number): Promise<void>;
  isAttached(): boolean;
}

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

export function createAmqpConsumer(options: AmqpConsumerOptions): AmqpConsumer {
  const { logger, handle } = options;
  const clientOptions = amqpClientOptions(options.amqp);
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
  // Releases in a row wait longer each time, so a dependency that is down does not spend the redelivery budget.
  const pause = releasePause(stopping.signal);
  // Settlements decided in one turn of the event loop are made together at its end: the client writes every
  // frame queued within one tick in a single socket write, and a write is a system call per message otherwise.
  // A settle waits at most for the rest of the current turn, never for another message.
  const settleBatch: Array<() => void> = [];

  function settleAtEndOfTurn(settle: () => void): Promise<void> {
    return new Promise((resolve) => {
      if (settleBatch.length === 0) setImmediate(settleAll);
      settleBatch.push(() => {
        settle();
        resolve();
      });
    });
  }

  function settleAll(): void {
    for (const settle of settleBatch.splice(0)) settle();
  }

  async function receive(message: IncomingMessage, window: SessionWindow): Promise<void> {
    let settled = false;
    const settle = (how: 'accept' | 'release' | 'reject', reason?: string) => {
      if (settled) return;
      settled = true;
      try {
        if (how === 'accept') message.done();
        else if (how === 'release') message.failed();
        else message.failed(new Error(reason));
        failedConnects = 0;
        window.settled();
      } catch (err) {
        // Settling twice throws in this client; after a lost connection the settle is dropped and the broker
        // redelivers. Either way there is nothing more to do for this message.
        logger.warn({ err }, 'could not settle message');
      }
    };
    try {
      const inbound = toInbound(message);
      const handled = await handle(inbound, { channel: 'amqp', signal: stopping.signal });
      const { outcome } = handled;
      let how: 'accept' | 'release' | 'reject' = outcome.kind;
      if (outcome.kind === 'reject') {
        const dead = deadLetterOf(message, inbound, outcome.reason, handled.event);
        const refusal = await options.refuse(dead, handled.log);
        // Rejected only once refused for good; while its dead letter cannot be stored, the message comes back.
        if (refusal.kind === 'retry_later') how = 'release';
        // Its letter stored by an earlier delivery: a broker that sends rejected messages again forgets it.
        else if (refusal.kind === 'already_refused') how = 'accept';
      }
      if (how === 'release') await pause.wait();
      else pause.end();
      await settleAtEndOfTurn(() => settle(how, outcome.kind === 'reject' ? outcome.reason : undefined));
    } catch (err) {
      // The final fallback: whatever went wrong, the message goes back to the queue, never lost, never stuck.
      logger.error({ err }, 'message handling failed unexpectedly; releasing it');
      await pause.wait();
      settle('release');
    }
  }

  function onMessage(message: IncomingMessage, window: SessionWindow): void {
    if (stopping.signal.aborted) {
      message.failed(); // arrived after shutdown began: hand it straight back
      return;
    }
    const work = receive(message, window);
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

  function connect(): void {
    const next = new Client(clientOptions);
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
    const window = sessionWindow(next.session(''), options.amqp.prefetch);
    next.on('disconnected', window.close);
    next
      .receiver('fleet-order-notifier')
      .attach(options.amqp.queue)
      .on('subscribed', () => {
        attached = true;
        logger.info({ address: options.amqp.queue }, 'AMQP receiver attached');
      })
      .on('data', (message: IncomingMessage) => onMessage(message, window))
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
  };
}
