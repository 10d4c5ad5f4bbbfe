// What recognises a refused message that never became an event, when the broker sends it again: a hash of the
// message as received. Its content type and binary-mode attributes count beside its bytes, so two messages with
// the same body under other attributes (in binary mode, another id) are two messages with a dead letter each. So
// does its channel: without an identity, the same bytes from another sender are that sender's message.
import { createHash } from 'node:crypto';

export interface ReceivedMessage {
  channel: string;
  contentType: string | undefined;
  attributes: Record<string, unknown>;
  body: Buffer;
}

const VERSION = 'b1:';

export function messageHash(message: ReceivedMessage): string {
  // Attributes in name order: a transport may hand them over in any order. AMQP values may be bigints.
  const attributes = Object.entries(message.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const head = JSON.stringify(
    [message.channel, message.contentType ?? null, attributes],
    (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value),
  );
  return `${VERSION}${createHash('sha256').update(head).update('\n').update(message.body).digest('hex')}`;
}
