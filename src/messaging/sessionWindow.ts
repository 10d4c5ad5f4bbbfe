// The session window, renewed as messages are settled. It bounds unsettled messages in this client
// (amqpClientOptions.ts), which renews it itself only once three quarters of it are settled: intake then comes in
// waves (docs/performance.md, What bounds the figures). Renewed here, the broker may send as many as were
// settled, never more than `prefetch` unsettled. Link credit renewed on settlement would be the textbook bound,
// but this client ends the connection on a transfer beyond its credit ("link credit underflow"), and RabbitMQ 3.10
// sends a few beyond it when credit is renewed while messages are on their way; the session window it honours.
import type { Session } from '@sap/xb-msg-amqp-v100';

export interface SessionWindow {
  /** A message was settled: its place may go to the next one. */
  settled(): void;
  /** The connection is gone: its window is gone with it. */
  close(): void;
}

/**
 * Renews `session`'s incoming window of `prefetch` once a tenth of it was settled since the last renewal, not on
 * every settle: a flow frame per message would double the frames the broker handles. The client computes the
 * window it grants from its own count of unsettled messages, so a renewal never grants more than is free, and it
 * leaves in the same socket write as the settlements of that turn.
 */
export function sessionWindow(session: Session, prefetch: number): SessionWindow {
  const step = Math.max(1, Math.ceil(prefetch / 10));
  let settledSinceRenewal = 0;
  let closed = false;
  return {
    settled() {
      if (closed || ++settledSinceRenewal < step) return;
      settledSinceRenewal = 0;
      session.flow(prefetch);
    },
    close() {
      closed = true;
    },
  };
}
