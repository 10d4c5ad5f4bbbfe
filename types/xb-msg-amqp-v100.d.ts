// @sap/xb-msg-amqp-v100 names an index.d.ts in its package.json but does not ship it, and there is no
// @types package. This declares only the surface the service (and its tests) use.
declare module '@sap/xb-msg-amqp-v100' {
  import type { EventEmitter } from 'node:events';
  import type { Readable, Writable } from 'node:stream';

  export interface ClientOptions {
    uri?: string | string[];
    net?: { host: string; port: number };
    tls?: Record<string, unknown>;
    wss?: { host: string; port: number; path: string; [key: string]: unknown };
    sasl?: { mechanism?: string; user?: string; password?: string };
    /** `request`: further options of the token request (https.request), e.g. a client certificate. */
    oa2?: { endpoint: string; client: string; secret: string; request?: Record<string, unknown> };
    tune?: { socketNoDelay?: boolean };
    amqp?: {
      containerID?: string;
      maxMessageSize?: number;
      incomingSessionWindow?: number;
      outgoingSessionWindow?: number;
      maxReceiverLinkCredit?: number;
      minReceiverLinkCredit?: number;
    };
  }

  export interface Payload {
    chunks?: Buffer[];
    data?: unknown;
    type?: string;
    properties?: Record<string, unknown>;
  }

  export interface IncomingMessage {
    payload: Payload;
    source: {
      header?: { durable?: boolean; deliveryCount?: number | null; firstAcquirer?: boolean };
      properties?: { messageID?: unknown; to?: string; subject?: string; contentType?: string };
      annotations?: Record<string, unknown>;
    };
    done(): void;
    failed(error?: Error): void;
  }

  export interface OutgoingMessage {
    payload: Payload;
    target?: { header?: { durable?: boolean }; properties?: Record<string, unknown> };
    done?: () => void;
    failed?: (error: Error) => void;
  }

  export interface IncomingStream extends Readable {
    on(event: 'data', listener: (message: IncomingMessage) => void): this;
    on(event: 'subscribed', listener: () => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export interface Receiver extends EventEmitter {
    attach(address: string): IncomingStream;
    detach(): void;
  }

  export interface Sender extends EventEmitter {
    attach(address: string): Writable;
  }

  export interface Session extends EventEmitter {
    /** Sets the window sizes and sends them: the incoming window granted is `incoming` less what is unsettled. */
    flow(incoming?: number, outgoing?: number): void;
  }

  export class Client extends EventEmitter {
    constructor(options: ClientOptions);
    connect(): void;
    disconnect(): void;
    /** '' is the default session, the one receivers attach to. */
    session(id: string): Session;
    receiver(name: string): Receiver;
    sender(name: string): Sender;
  }
}
