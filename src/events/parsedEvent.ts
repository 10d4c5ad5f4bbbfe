// What the parser (cloudEvent.ts) takes from a transport and gives the rest of the path. Types only, so that every
// module of the path, the families' among them, can name an event without importing the parser.
import type { PayloadHashes } from './payloadHash.js';

export interface InboundMessage {
  body: Buffer;
  contentType: string | undefined;
  /** Binary-mode attributes with their transport prefix removed (`id`, `source`, ...); empty in structured mode. */
  binaryAttributes: Record<string, unknown>;
  /** Attribute names the transport carried more than once (e.g. under both AMQP prefixes): refused. */
  repeatedAttributes?: string[];
  /** Why the transport could not read the message (headers not decodable, a batch not splittable): refused. */
  unreadable?: string;
}

export interface ParsedEvent extends PayloadHashes {
  source: string;
  id: string;
  type: string;
  /** The name of the event family the type belongs to (src/families/index.ts); undefined: only recorded. */
  family: string | undefined;
  /** What the event names in its family (a sales order, a customer return), valid inside an OData key. */
  key: string | undefined;
  /** The CloudEvents distributed-tracing extension, when present and well-formed: the producer's trace. */
  traceparent?: string;
  tracestate?: string;
  /**
   * A document reconciliation read (reconcileRead.ts): the run that found it, whether it may notify, and the
   * S/4HANA system it was read from (S4_SOURCE), which its identity's source is not.
   */
  reconciled?: { run: string; notify: boolean; system: string };
}
