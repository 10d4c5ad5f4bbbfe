// An AMQP message as the flow sees it: body, content type, CloudEvents binary-mode attributes.
import type { IncomingMessage } from '@sap/xb-msg-amqp-v100';
import { collectAttributes } from '../events/binaryAttributes.js';
import type { InboundMessage } from '../events/parsedEvent.js';

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
