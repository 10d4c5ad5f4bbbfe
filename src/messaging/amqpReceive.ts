// One AMQP message from receipt to settlement: receive → handle (the handler refuses what it rejects) → pause
// after a release → settle, exactly once, with a final fallback. Settlement: accept → `accepted`; release →
// `released` (redelivered); reject → `rejected`, its dead letter stored by the handler.
import type { IncomingMessage } from '@sap/xb-msg-amqp-v100';
import type { Logger } from 'pino';
import type { HandleEvent } from '../events/outcome.js';
import { perTurn } from '../events/perTurn.js';
import { toInbound } from './amqpMessage.js';
import { releasePause } from './releasePause.js';
import type { SessionWindow } from './sessionWindow.js';

export interface ReceiveOptions {
  handle: HandleEvent;
  logger: Logger;
  /** Aborted at shutdown: retry waits and release pauses end at once. */
  signal: AbortSignal;
  /** Called at every settlement: the connection is taking messages. */
  onSettled: () => void;
}

type Settlement = 'accept' | 'release' | 'reject';

export function amqpReceiver(
  options: ReceiveOptions,
): (message: IncomingMessage, window: SessionWindow) => Promise<void> {
  const { logger, handle, signal } = options;
  // Releases in a row wait longer each time, so a dependency that is down does not spend the redelivery budget.
  const pause = releasePause(signal);
  // Settlements decided in one turn are made together at its end: the client writes every frame queued within
  // one tick in a single socket write, and a write is a system call per message otherwise.
  const settleTogether = perTurn<() => void>((settles) => {
    for (const settle of settles) settle();
  });
  const settleAtEndOfTurn = (settle: () => void) =>
    new Promise<void>((resolve) =>
      settleTogether('', () => {
        settle();
        resolve();
      }),
    );

  return async function receive(message, window) {
    let settled = false;
    const settle = (how: Settlement, reason?: string) => {
      if (settled) return;
      settled = true;
      try {
        if (how === 'accept') message.done();
        else if (how === 'release') message.failed();
        else message.failed(new Error(reason));
        options.onSettled();
        window.settled();
      } catch (err) {
        // Settling twice throws in this client; after a lost connection the settle is dropped and the broker
        // redelivers. Either way there is nothing more to do for this message.
        logger.warn({ err }, 'could not settle message');
      }
    };
    try {
      const inbound = toInbound(message);
      const headers = { ...message.payload.properties, messageId: message.source.properties?.messageID };
      const { outcome } = await handle(inbound, { channel: 'amqp', signal, headers });
      if (outcome.kind === 'release') await pause.wait();
      else pause.end();
      await settleAtEndOfTurn(() =>
        settle(outcome.kind, outcome.kind === 'reject' ? outcome.reason : undefined),
      );
    } catch (err) {
      // The final fallback: whatever went wrong, the message goes back to the queue, never lost, never stuck.
      logger.error({ err }, 'message handling failed unexpectedly; releasing it');
      await pause.wait();
      settle('release');
    }
  };
}
