/**
 * Stand-in for the mail relay the notifier sends through.
 *
 * Tests need to see the mail the service really put on the wire (headers, Message-ID, body) and to make
 * the relay refuse a message, temporarily (451) or for good (550, 554), to prove the outbox retries the first
 * and gives up on the second. Refusals read like a real relay's, addresses included, as Postfix words them:
 * the message after DATA, or a recipient at RCPT (550 5.1.1 unknown, 452 4.2.2 mailbox full). This is a real
 * SMTP server (`smtp-server`) on 127.0.0.1 without TLS, or offering STARTTLS with a certificate nobody trusts
 * (a relay whose TLS fails), that parses each accepted message with `mailparser` and keeps it in memory. AUTH
 * is offered and accepts any credentials, so a service configured with a user and password can send here
 * unchanged. A hold keeps the reply to DATA back, as a slow relay does, to show what a send that outlasts a
 * lease does; a message whose sender hung up during the hold is dropped, since a relay takes a message over
 * only with its reply.
 * smtp-server waits about 100 ms before greeting a new connection; senders should pool connections.
 */
import { simpleParser } from 'mailparser';
import {
  SMTPServer,
  type SMTPServerAddress,
  type SMTPServerDataStream,
  type SMTPServerError,
  type SMTPServerSession,
} from 'smtp-server';

export interface ReceivedMail {
  /** From the Message-ID header, angle brackets included; '' when the message has none. */
  messageId: string;
  /** Envelope sender (MAIL FROM); the From header is in `headers.from`. */
  from: string;
  /** Envelope recipients (RCPT TO); the To header is in `headers.to`. */
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** Lower-cased header name -> raw value, unfolded; the first occurrence wins for repeated headers. */
  headers: Record<string, string>;
  raw: string;
  /** When the relay accepted it (ms since the epoch). */
  receivedAt: number;
}

/** After DATA: take it, 451 (try later), 550 (refused) or 554 (refused as spam). */
export type SmtpDecision = 'accept' | 'transient' | 'permanent' | 'spam';
/** `callNo` is the 1-based delivery attempt for this Message-ID since start or the last clear(). */
export type SmtpRefuseFn = (mail: {
  from: string;
  to: string[];
  messageId?: string;
  callNo: number;
}) => SmtpDecision;

/** How the relay answers RCPT TO for one address: take it, 550 (no such user) or 452 (mailbox full). */
export type RcptDecision = 'accept' | 'unknown' | 'full';
export type RcptRefuseFn = (address: string) => RcptDecision;

/** Delays the reply to an accepted message's DATA: milliseconds, or until the promise settles. */
export type SmtpHoldFn = (mail: { messageId?: string; callNo: number }) => number | Promise<void>;

export interface SmtpSink {
  /** smtp://127.0.0.1:port */
  url: string;
  port: number;
  /** Accepted messages in arrival order (a live array). */
  messages: ReceivedMail[];
  /** Resolves with a snapshot once at least `n` messages were accepted. */
  waitForCount(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  setRefuse(fn: SmtpRefuseFn | undefined): void;
  setRefuseRecipient(fn: RcptRefuseFn | undefined): void;
  setHold(fn: SmtpHoldFn | undefined): void;
  /** Forgets accepted messages and attempt counts. */
  clear(): void;
  close(): Promise<void>;
}

interface Waiter {
  n: number;
  resolve: (mails: ReceivedMail[]) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

// Enhanced status codes are written here, in the words of the relay, so smtp-server adds none of its own.
const REFUSALS: Record<Exclude<SmtpDecision, 'accept'>, (to: string[]) => [number, string]> = {
  transient: () => [451, '4.3.0 Error: queue file write error'],
  permanent: (to) => [550, `5.7.1 <${to.join('>, <')}>: Message rejected: relay access denied`],
  spam: (to) => [554, `5.7.1 Message to <${to.join('>, <')}> rejected: spam content`],
};
const RCPT_REFUSALS: Record<Exclude<RcptDecision, 'accept'>, (address: string) => [number, string]> = {
  unknown: (address) => [
    550,
    `5.1.1 <${address}>: Recipient address rejected: User unknown in local recipient table`,
  ],
  full: (address) => [452, `4.2.2 <${address}>: Recipient address rejected: Mailbox full`],
};

export async function startSmtpServer(
  options: {
    port?: number;
    refuse?: SmtpRefuseFn;
    /** Offer STARTTLS with smtp-server's built-in certificate, which no client trusts. */
    untrustedTls?: boolean;
    /** How long close() lets a client that ignores the goodbye keep its session (default 1000 ms). */
    closeTimeoutMs?: number;
  } = {},
): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const attempts = new Map<string, number>();
  const waiters = new Set<Waiter>();
  let refuse = options.refuse;
  let refuseRecipient: RcptRefuseFn | undefined;
  let hold: SmtpHoldFn | undefined;
  const closedSessions = new Set<string>();

  async function receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    if (stream.sizeExceeded) throw smtpError(552, '5.3.4 Message too big');
    const raw = Buffer.concat(chunks);
    const parsed = await simpleParser(raw);
    const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const to = session.envelope.rcptTo.map((rcpt) => rcpt.address);
    const messageId = parsed.messageId ?? '';
    const callNo = (attempts.get(messageId) ?? 0) + 1;
    attempts.set(messageId, callNo);

    const decision = refuse?.({ from, to, messageId: parsed.messageId, callNo }) ?? 'accept';
    if (decision !== 'accept') throw smtpError(...REFUSALS[decision](to));
    const held = hold?.({ messageId: parsed.messageId, callNo });
    if (held !== undefined) {
      await (typeof held === 'number' ? new Promise((resolve) => setTimeout(resolve, held)) : held);
      if (closedSessions.has(session.id)) throw smtpError(421, '4.4.2 The client left before the reply');
    }

    const headers: Record<string, string> = {};
    for (const { key, line } of parsed.headerLines) {
      const value = line.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ');
      headers[key.toLowerCase()] ??= value.trim();
    }
    messages.push({
      messageId,
      from,
      to,
      subject: parsed.subject ?? '',
      text: parsed.text ?? '',
      html: parsed.html || '',
      headers,
      raw: raw.toString('utf8'),
      receivedAt: Date.now(),
    });
    for (const waiter of waiters) {
      if (messages.length >= waiter.n) settle(waiter).resolve(messages.slice());
    }
  }

  function settle(waiter: Waiter): Waiter {
    clearTimeout(waiter.timer);
    waiters.delete(waiter);
    return waiter;
  }

  const server = new SMTPServer({
    secure: false,
    disabledCommands: options.untrustedTls ? [] : ['STARTTLS'],
    hideENHANCEDSTATUSCODES: true,
    authOptional: true,
    allowInsecureAuth: true,
    size: 50 * 1024 * 1024,
    logger: false,
    // close() ends sessions itself; this only bounds a client that ignores the goodbye.
    closeTimeout: options.closeTimeoutMs ?? 1000,
    onAuth: (_auth, _session, callback) => callback(null, { user: 'sandbox' }),
    onClose: (session) => void closedSessions.add(session.id),
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      const decision = refuseRecipient?.(address.address) ?? 'accept';
      callback(decision === 'accept' ? null : smtpError(...RCPT_REFUSALS[decision](address.address)));
    },
    onData(stream, session, callback) {
      receive(stream, session).then(
        () => callback(null, 'OK: queued by sandbox'),
        (err: SMTPServerError) => {
          // Drain whatever is left so the session can answer; unexpected failures are transient.
          stream.resume();
          err.responseCode ??= 451;
          callback(err);
        },
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Clients drop connections mid-session (the crash suite kills the service); that is no reason to crash.
  server.on('error', () => {});
  const port = (server.server.address() as { port: number }).port;

  let closing: Promise<void> | undefined;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    waitForCount(n, timeoutMs = 5000) {
      if (messages.length >= n) return Promise.resolve(messages.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          settle(waiter);
          reject(new Error(`expected ${n} mail(s) within ${timeoutMs} ms, but ${messages.length} arrived`));
        }, timeoutMs);
        const waiter: Waiter = { n, resolve, reject, timer };
        waiters.add(waiter);
      });
    },
    setRefuse(fn) {
      refuse = fn;
    },
    setRefuseRecipient(fn) {
      refuseRecipient = fn;
    },
    setHold(fn) {
      hold = fn;
    },
    clear() {
      messages.length = 0;
      attempts.clear();
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const waiter of waiters) {
          settle(waiter).reject(new Error(`SMTP sink closed with ${messages.length} mail(s) received`));
        }
        server.close(() => resolve());
        // A pooled sender keeps idle sessions open; without this close() waits for closeTimeout.
        for (const connection of server.connections) connection.close();
      });
      return closing;
    },
  };
}

function smtpError(code: number, text: string): SMTPServerError {
  const err: SMTPServerError = new Error(text);
  err.responseCode = code;
  return err;
}
