// One SMTP session with the relay. Opening it reads the greeting, says EHLO, upgrades with STARTTLS and logs on
// as SMTP_URL asks; after that the caller writes commands in whatever groups it likes and gets back each reply
// the relay owes, in order, so that commands can be pipelined (RFC 2920).
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { type FailureKind, PermanentError, TransientError } from '../errors.js';
import type { SmtpSettings } from './smtpSettings.js';

export interface Reply {
  code: number;
  /** Every line of the reply, codes included, joined by line feeds. */
  text: string;
}

export interface SmtpConnection {
  /** Writes `text` in one piece and returns the `replies` replies it is owed, in order. */
  exchange(text: string, replies: number): Promise<Reply>[];
  /** The relay takes a group of commands without waiting for each reply. */
  readonly pipelining: boolean;
  /** The socket is gone or going: no reply will come. */
  readonly closed: boolean;
  /** Says goodbye and ends the session. */
  quit(): void;
}

/**
 * An SMTP failure with the fields a log line keeps (errorFields.ts): `code` in nodemailer's words (EENVELOPE,
 * EMESSAGE, ESOCKET…), the refused command, the relay's reply and its code. The kind is stated: the client knows
 * whether a reply refuses for good (5xx) or for now (4xx), and that a session which cannot be opened is the
 * relay's or an operator's to mend, never the message's.
 */
export function smtpError(
  kind: FailureKind,
  message: string,
  fields: { code: string; command?: string; reply?: Reply; cause?: unknown },
): Error {
  const { code, command, reply, cause } = fields;
  const text = reply === undefined ? message : `${message}: ${reply.text}`;
  const err =
    kind === 'permanent' ? new PermanentError(text, { cause }) : new TransientError(text, { cause });
  return Object.assign(err, {
    code,
    ...(command === undefined ? {} : { command }),
    ...(reply === undefined ? {} : { response: reply.text, responseCode: reply.code }),
  });
}

/** A relay's refusal of a message's command: for good when 5xx, for now otherwise. */
export function refusal(message: string, code: string, command: string, reply: Reply): Error {
  return smtpError(reply.code >= 500 ? 'permanent' : 'transient', message, { code, command, reply });
}

// A reply line is short (RFC 5321 allows 512 bytes); a relay that sends this much without a line end is broken.
const MAX_PENDING_TEXT = 64 * 1024;

class Session implements SmtpConnection {
  pipelining = false;
  startTls = false;
  authMechanisms: string[] = [];
  closed = false;
  private socket!: Socket;
  private waiters: Array<{ resolve: (reply: Reply) => void; reject: (err: Error) => void }> = [];
  private pending = '';
  private lines: string[] = [];

  constructor(
    socket: Socket,
    private readonly timeoutMs: number,
  ) {
    this.attach(socket);
  }

  attach(socket: Socket): void {
    this.socket = socket;
    socket.on('data', this.onData);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    socket.on('timeout', this.onTimeout);
  }

  /** Hands the socket over (to be wrapped in TLS), with nothing owed on it. */
  detach(): Socket {
    const { socket } = this;
    socket.off('data', this.onData);
    socket.off('error', this.onError);
    socket.off('close', this.onClose);
    socket.off('timeout', this.onTimeout);
    socket.setTimeout(0);
    return socket;
  }

  /** The reply owed without a command: the greeting. */
  owed(timeoutMs: number): Promise<Reply> {
    this.socket.setTimeout(timeoutMs);
    return this.wait();
  }

  exchange(text: string, replies: number): Promise<Reply>[] {
    const owed = Array.from({ length: replies }, () => this.wait());
    if (!this.closed) {
      this.socket.write(text);
      this.socket.setTimeout(this.timeoutMs);
    }
    return owed;
  }

  quit(): void {
    if (this.closed) return;
    this.closed = true;
    // The 221 goodbye needs no answer; a relay that never closes is cut off after the reply timeout.
    this.socket.setTimeout(this.timeoutMs);
    this.socket.end('QUIT\r\n');
  }

  /** Ends the session now, failing every reply still owed. */
  fail(err: Error): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
    this.socket.destroy();
  }

  private wait(): Promise<Reply> {
    if (this.closed) {
      return Promise.reject(
        smtpError('transient', 'the connection to the relay is closed', { code: 'ECONNECTION' }),
      );
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private readonly onData = (chunk: Buffer): void => {
    this.pending += chunk.toString('latin1');
    let end = this.pending.indexOf('\n');
    while (end >= 0) {
      const line = this.pending.slice(0, this.pending[end - 1] === '\r' ? end - 1 : end);
      this.pending = this.pending.slice(end + 1);
      this.lines.push(line);
      // "250-" continues a reply, "250 " ends it.
      if (line[3] !== '-') this.replied({ code: Number(line.slice(0, 3)), text: this.lines.join('\n') });
      end = this.pending.indexOf('\n');
    }
    if (this.pending.length > MAX_PENDING_TEXT) {
      this.fail(
        smtpError('transient', 'the relay sent a line too long to be a reply', { code: 'EPROTOCOL' }),
      );
    }
  };

  private replied(reply: Reply): void {
    this.lines = [];
    const waiter = this.waiters.shift();
    if (this.waiters.length === 0) this.socket.setTimeout(0);
    if (waiter !== undefined) waiter.resolve(reply);
    // A reply nobody asked for: the relay's goodbye to an idle session (421), or the answer to QUIT.
    else this.fail(smtpError('transient', 'the relay ended the session', { code: 'ECONNECTION', reply }));
  }

  private readonly onError = (err: Error): void => {
    this.fail(smtpError('transient', err.message, { code: 'ESOCKET', cause: err }));
  };

  private readonly onClose = (): void => {
    this.fail(smtpError('transient', 'the relay closed the connection', { code: 'ECONNECTION' }));
  };

  private readonly onTimeout = (): void => {
    this.fail(smtpError('transient', 'the relay did not reply in time', { code: 'ETIMEDOUT' }));
  };
}

/** Connects, greets, secures and logs on; rejects with a transient SMTP error when any step fails. */
export async function openSmtpConnection(settings: SmtpSettings): Promise<SmtpConnection> {
  const session = new Session(await connect(settings), settings.socketTimeoutMs);
  try {
    expect(
      await session.owed(settings.greetingTimeoutMs),
      220,
      'the relay did not greet',
      'EPROTOCOL',
      'CONN',
    );
    await hello(session, settings);
    if (!settings.secure && !settings.ignoreTLS && (session.startTls || settings.requireTLS)) {
      if (!session.startTls) {
        throw smtpError('transient', 'the relay offers no STARTTLS, and SMTP_URL requires TLS', {
          code: 'ETLS',
        });
      }
      expect(await command(session, 'STARTTLS'), 220, 'the relay refused STARTTLS', 'ETLS', 'STARTTLS');
      session.attach(await connect(settings, session.detach()));
      await hello(session, settings);
    }
    if (settings.auth !== undefined) await logOn(session, settings.auth);
    return session;
  } catch (err) {
    session.fail(err as Error);
    throw err;
  }
}

/** A TCP connection, in TLS from the start for smtps, or the plain one wrapped in TLS after STARTTLS. */
function connect(settings: SmtpSettings, plain?: Socket): Promise<Socket> {
  const { host, port } = settings;
  return new Promise((resolve, reject) => {
    const socket =
      plain !== undefined
        ? tlsConnect({ ...settings.tls, socket: plain })
        : settings.secure
          ? tlsConnect({ ...settings.tls, host, port })
          : netConnect({ host, port });
    const ready = plain !== undefined || settings.secure ? 'secureConnect' : 'connect';
    const failed = (err: Error) => {
      clearTimeout(timer);
      plain?.off('error', onError);
      socket.destroy();
      reject(err);
    };
    const onError = (err: Error) =>
      failed(smtpError('transient', err.message, { code: 'ESOCKET', cause: err }));
    const timer = setTimeout(
      () =>
        failed(
          smtpError('transient', 'the relay did not answer the connection in time', { code: 'ETIMEDOUT' }),
        ),
      settings.connectionTimeoutMs,
    );
    // The plain socket under a TLS handshake can fail on its own; an error nobody listens to would end the process.
    for (const emitter of [socket, plain]) emitter?.once('error', onError);
    socket.once(ready, () => {
      clearTimeout(timer);
      for (const emitter of [socket, plain]) emitter?.off('error', onError);
      // A pipelined group is written at once; Nagle's delay would only hold its last segment back.
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

async function hello(session: Session, settings: SmtpSettings): Promise<void> {
  const ehlo = await command(session, `EHLO ${settings.name}`);
  if (ehlo.code !== 250) {
    // A relay from before ESMTP: no extensions.
    expect(
      await command(session, `HELO ${settings.name}`),
      250,
      'the relay refused HELO',
      'EPROTOCOL',
      'HELO',
    );
    return;
  }
  const extensions = ehlo.text
    .split('\n')
    .slice(1)
    .map((line) => line.slice(4).toUpperCase());
  session.pipelining = extensions.includes('PIPELINING');
  session.startTls = extensions.includes('STARTTLS');
  const auth = extensions.find((extension) => /^AUTH[ =]/.test(extension));
  session.authMechanisms = auth === undefined ? [] : auth.slice(5).split(/\s+/);
}

/** AUTH PLAIN where the relay offers it or names no mechanism, else AUTH LOGIN. */
async function logOn(session: Session, { user, pass }: { user: string; pass: string }): Promise<void> {
  const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  const mechanisms = session.authMechanisms;
  if (mechanisms.includes('PLAIN') || !mechanisms.includes('LOGIN')) {
    const reply = await command(session, `AUTH PLAIN ${base64(`\u0000${user}\u0000${pass}`)}`);
    expect(reply, 235, 'the relay refused the logon', 'EAUTH', 'AUTH PLAIN');
    return;
  }
  for (const [line, wanted] of [
    ['AUTH LOGIN', 334],
    [base64(user), 334],
    [base64(pass), 235],
  ] as const) {
    expect(await command(session, line), wanted, 'the relay refused the logon', 'EAUTH', 'AUTH LOGIN');
  }
}

function command(session: Session, line: string): Promise<Reply> {
  return session.exchange(`${line}\r\n`, 1)[0] as Promise<Reply>;
}

/** A step of opening the session that did not get its reply: transient, whatever the reply's code. */
function expect(reply: Reply, wanted: number, message: string, code: string, command: string): void {
  if (reply.code !== wanted) throw smtpError('transient', message, { code, command, reply });
}
