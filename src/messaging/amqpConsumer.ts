// The AMQP 1.0 edge: connect, keep connected, receive, and settle every message exactly once.
// Settlement: accept → `accepted`; release → `released` (redelivered); reject → `rejected` (dead-lettered).
// Nothing here decides an outcome: that is handleEvent's job.
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, type ClientOptions, type IncomingMessage } from '@sap/xb-msg-amqp-v100';
import type { Logger } from 'pino';
import { collectAttributes } from '../events/binaryAttributes.js';
import type { InboundMessage } from '../events/cloudEvent.js';
import type { DeadLetter } from '../events/deadLetter.js';
import type { HandleEvent } from '../events/handleEvent.js';
import type { Refuse } from '../events/refuse.js';
import { connectFailureReason } from './connectFailure.js';

export interface AmqpConsumerOptions {
  client: ClientOptions;
  address: string;
  handle: HandleEvent;
  /** Stores a refused message (src/events/refuse.ts): rejected once refused, released to retry later. */
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
// A released message comes back at once. While a dependency is down, releasing at once is a hot loop that
// spends the broker's redelivery budget (Event Mesh's max redelivery count, a quorum queue's delivery limit)
// in milliseconds and dead-letters events that were fine. So a release waits about as long as releases have
// been happening in a row (from RELEASE_PAUSE_MIN_MS up to RELEASE_PAUSE_MAX_MS), and any accepted or
// rejected message ends the streak. Held messages count against the session window, which pauses intake.
const RELEASE_PAUSE_MIN_MS = 250;
const RELEASE_PAUSE_MAX_MS = 30_000;

export function createAmqpConsumer(options: AmqpConsumerOptions): AmqpConsumer {
  const { logger, handle } = options;
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
  // When the current run of releases began; undefined once a message was accepted or rejected.
  let releasingSince: number | undefined;

  async function pauseBeforeRelease(): Promise<void> {
    releasingSince ??= Date.now();
    const ceiling = Math.min(
      RELEASE_PAUSE_MAX_MS,
      Math.max(RELEASE_PAUSE_MIN_MS, Date.now() - releasingSince),
    );
    // Shutdown ends the pause: the message goes back at once.
    await sleep(ceiling / 2 + Math.random() * (ceiling / 2), undefined, { signal: stopping.signal }).catch(
      () => {},
    );
  }
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

  async function receive(message: IncomingMessage): Promise<void> {
    let settled = false;
    const settle = (how: 'accept' | 'release' | 'reject', reason?: string) => {
      if (settled) return;
      settled = true;
      try {
        if (how === 'accept') message.done();
        else if (how === 'release') message.failed();
        else message.failed(new Error(reason));
        failedConnects = 0;
      } catch (err) {
        // Settling twice throws in this client; after a lost connection the settle is dropped and the broker
        // redelivers. Either way there is nothing more to do for this message.
        logger.warn({ err }, 'could not settle message');
      }
    };
    try {
      const inbound = toInbound(message);
      const { outcome, event, log } = await handle(inbound, { channel: 'amqp', signal: stopping.signal });
      let how: 'accept' | 'release' | 'reject' = outcome.kind;
      if (outcome.kind === 'reject') {
        const refusal = await options.refuse(deadLetterOf(message, inbound, outcome.reason, event), log);
        // Rejected only once refused for good; while its dead letter cannot be stored, the message comes back.
        if (refusal.kind === 'retry_later') how = 'release';
      }
      if (how === 'release') await pauseBeforeRelease();
      else releasingSince = undefined;
      await settleAtEndOfTurn(() => settle(how, outcome.kind === 'reject' ? outcome.reason : undefined));
    } catch (err) {
      // The final fallback: whatever went wrong, the message goes back to the queue, never lost, never stuck.
      logger.error({ err }, 'message handling failed unexpectedly; releasing it');
      await pauseBeforeRelease();
      settle('release');
    }
  }

  function onMessage(message: IncomingMessage): void {
    if (stopping.signal.aborted) {
      message.failed(); // arrived after shutdown began: hand it straight back
      return;
    }
    const work = receive(message);
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

  function connect(): void {
    const next = new Client(options.client);
    client = next;
    next
      .on('connected', () => logger.info('AMQP connected'))
      .on('error', (err: Error) => {
        // Errors of a session or link (e.g. the queue does not exist yet) end the receiver for good, and the
        // client reports them here. As in the library's own examples, drop the connection: the reconnect below
        // attaches again, so consuming resumes as soon as the cause is gone. Unsettled messages are redelivered.
        logger.error(
          { err, reason: connectFailureReason(err), address: options.address },
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
    next
      .receiver('fleet-order-notifier')
      .attach(options.address)
      .on('subscribed', () => {
        attached = true;
        logger.info({ address: options.address }, 'AMQP receiver attached');
      })
      .on('data', onMessage)
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

function deadLetterOf(
  message: IncomingMessage,
  inbound: InboundMessage,
  reason: string,
  event: { source: string; id: string } | undefined,
): DeadLetter {
  return {
    channel: 'amqp',
    reason,
    source: event?.source,
    eventId: event?.id,
    contentType: inbound.contentType,
    attributes: inbound.binaryAttributes,
    headers: { ...message.payload.properties, messageId: message.source.properties?.messageID },
    body: inbound.body,
  };
}

/** Reads the body and CloudEvents binary-mode attributes (`cloudEvents:` or `cloudEvents_` prefix). */
export function toInbound(message: IncomingMessage): InboundMessage {
  const { payload } = message;
  const { attributes: binaryAttributes, repeated: repeatedAttributes } = collectAttributes(
    Object.entries(payload.properties ?? {}).flatMap(([key, value]) => {
      const name = /^cloudEvents[:_](.+)$/.exec(key)?.[1];
      return name === undefined ? [] : [[name, value] as const];
    }),
  );
  // A data section arrives as chunks. An amqp-value string is taken as text, since some producers send JSON
  // that way; any other amqp-value keeps the type 'amqp-1.0', which the parser refuses as not JSON.
  if (payload.type !== 'amqp-1.0') {
    return {
      body: Buffer.concat(payload.chunks ?? []),
      contentType: payload.type,
      binaryAttributes,
      repeatedAttributes,
    };
  }
  if (typeof payload.data === 'string') {
    return {
      body: Buffer.from(payload.data, 'utf8'),
      contentType: undefined,
      binaryAttributes,
      repeatedAttributes,
    };
  }
  const body = Buffer.from(String(JSON.stringify(payload.data ?? null)), 'utf8');
  return { body, contentType: 'amqp-1.0', binaryAttributes, repeatedAttributes };
}
