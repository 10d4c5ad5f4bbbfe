// The session window, renewed as messages are settled. It bounds unsettled messages in this client
// (amqpClientOptions.ts), which renews it itself only once three quarters of it are settled: intake then comes in
// waves (docs/performance.md, What bounds the figures). Renewed here, the broker may send as many as were
// settled, never more than the window unsettled. Link credit renewed on settlement would be the textbook bound,
// but this client ends the connection on a transfer beyond its credit ("link credit underflow"), and RabbitMQ 3.10
// sends a few beyond it when credit is renewed while messages are on their way; the session window it honours.
//
// The window's size comes from a CreditWindow (creditWindow.ts). Growing is safe at any time. Shrinking is not:
// this client also ends the connection when a transfer arrives with the window already full ("incoming window
// overflow"), and transfers the broker sent under the larger window may still be on their way. So a smaller
// window is set only when the larger one is full: then the broker has no credit left, nothing is on its way,
// and the smaller window simply grants nothing until enough messages are settled.
import type { Session } from '@sap/xb-msg-amqp-v100';
import { type CreditWindow, fixedWindow } from './creditWindow.js';

export interface SessionWindow {
  /** A message of `bytes` arrived. */
  received(bytes: number): void;
  /** A message was settled: its place may go to the next one. */
  settled(): void;
  /** The connection is gone: its window is gone with it. */
  close(): void;
}

/**
 * Renews `session`'s incoming window once a tenth of it was settled since the last renewal, not on every
 * settle: a flow frame per message would double the frames the broker handles. The client computes the window it
 * grants from its own count of unsettled messages, so a renewal never grants more than is free, and it leaves in
 * the same socket write as the settlements of that turn. `control`: the window's size, or a number for a fixed
 * one. The session must have been opened with `control.current()` as its incoming window.
 */
export function sessionWindow(session: Session, control: CreditWindow | number): SessionWindow {
  const size = typeof control === 'number' ? fixedWindow(control) : control;
  size.reset(); // a new connection: nothing held yet
  let granted = size.current();
  let settledSinceRenewal = 0;
  let closed = false;
  return {
    received(bytes) {
      if (closed) return;
      size.received(bytes);
      const next = size.current();
      if (next < granted && size.held() >= granted) {
        granted = next;
        session.flow(granted);
      }
    },
    settled() {
      if (closed) return;
      size.settled();
      if (++settledSinceRenewal < Math.ceil(granted / 10)) return;
      settledSinceRenewal = 0;
      granted = Math.max(granted, size.current());
      session.flow(granted);
    },
    close() {
      closed = true;
      size.reset();
    },
  };
}
