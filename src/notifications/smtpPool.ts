// Sends finished messages over a few kept SMTP connections. Where the relay pipelines, a connection writes each
// message, its end mark and the next message's envelope (MAIL FROM, RCPT TO, DATA) in one piece, so that an
// email costs one write and one reply turn while emails are waiting.
import { openSmtpConnection, type Reply, refusal, type SmtpConnection, smtpError } from './smtpConnection.js';
import type { SmtpSettings } from './smtpSettings.js';

export interface Envelope {
  from: string;
  to: string[];
}

/** A message the relay took: the refusals of the recipients it would not take (the others got it). */
export interface Delivered {
  refused: Error[];
}

export interface SmtpPool {
  /** Sends a whole message (CRLF line ends, not yet dot-stuffed) to the envelope's recipients. */
  send(envelope: Envelope, message: string): Promise<Delivered>;
  /** Fails what waits, lets each connection finish the message it is on, then says goodbye. */
  close(): void;
}

interface Job {
  envelope: Envelope;
  message: string;
  resolve(delivered: Delivered): void;
  reject(err: unknown): void;
  /** Put back once already: its connection died before its message went out. */
  requeued: boolean;
}

/** The relay's replies to an envelope; `data` is missing where no recipient was taken and DATA never sent. */
interface EnvelopeReplies {
  mail: Reply;
  recipients: Reply[];
  data?: Reply;
}

/** A job whose envelope went out behind the last message, with the replies the relay owes for it. */
interface Pipelined {
  job: Job;
  replies: Promise<EnvelopeReplies>;
}

const closedError = () => smtpError('transient', 'the mail transport is closed', { code: 'ECONNECTION' });

export function smtpPool(settings: SmtpSettings): SmtpPool {
  const queue: Job[] = [];
  // Connections with nothing to send, each waiting for a job (or undefined: time to say goodbye).
  const idle: Array<(job: Job | undefined) => void> = [];
  let workers = 0;
  let closed = false;

  function dispatch(job: Job): void {
    const waiting = idle.shift();
    if (waiting !== undefined) waiting(job);
    else if (workers < settings.maxConnections) start(job);
    else queue.push(job);
  }

  function start(job: Job): void {
    workers++;
    void work(job).finally(() => {
      workers--;
      const next = queue.shift();
      if (next !== undefined) start(next);
    });
  }

  /** Waits for a job for as long as the relay keeps an idle session. */
  function nextJob(): Promise<Job | undefined> {
    const queued = queue.shift();
    if (queued !== undefined || closed) return Promise.resolve(queued);
    return new Promise((resolve) => {
      const waiting = (job: Job | undefined) => {
        clearTimeout(timer);
        resolve(job);
      };
      const timer = setTimeout(() => {
        idle.splice(idle.indexOf(waiting), 1);
        resolve(undefined);
      }, settings.socketTimeoutMs);
      idle.push(waiting);
    });
  }

  /** One connection's life: its jobs one after another, reconnecting when the relay hung up between them. */
  async function work(first: Job): Promise<void> {
    let connection: SmtpConnection | undefined;
    let sent = 0;
    let job: Job | undefined = first;
    let owed: Promise<EnvelopeReplies> | undefined;
    while (job !== undefined) {
      if (connection === undefined || (connection.closed && owed === undefined)) {
        try {
          connection = await openSmtpConnection(settings);
          sent = 0;
        } catch (err) {
          job.reject(err);
          return;
        }
      }
      const open: SmtpConnection = connection;
      const pipelined = await transact(open, job, owed, () =>
        open.pipelining && sent + 2 <= settings.maxMessages ? queue.shift() : undefined,
      );
      sent++;
      job = pipelined?.job;
      owed = pipelined?.replies;
      if (job === undefined && sent < settings.maxMessages) job = await nextJob();
    }
    connection?.quit();
  }

  /**
   * One message on one connection: the envelope (unless it went out behind the last message), then the message.
   * Settles the job and never throws. A job whose connection died before its message went out is put back once,
   * for a fresh connection: the relay has not seen it.
   */
  async function transact(
    connection: SmtpConnection,
    job: Job,
    owed: Promise<EnvelopeReplies> | undefined,
    takeNext: () => Job | undefined,
  ): Promise<Pipelined | undefined> {
    let written = false;
    let pipelined: Pipelined | undefined;
    try {
      const { envelope } = job;
      const { mail, recipients, data } = await (owed ?? envelopeReplies(connection, envelope));
      if (!positive(mail)) throw refusal('the relay refused the sender', 'EENVELOPE', 'MAIL FROM', mail);
      const refused = recipients.flatMap((reply, i) =>
        positive(reply) ? [] : [{ address: envelope.to[i] as string, reply }],
      );
      const everyRecipient = refused.length === envelope.to.length;
      if (data === undefined || data.code !== 354 || everyRecipient) {
        if (data?.code === 354) {
          // A relay that opened DATA with no recipient: an empty message ends it, delivered to nobody.
          await Promise.all(connection.exchange('.\r\n', 1));
        }
        // The relay may still hold the sender: clear it for the next message.
        await Promise.all(connection.exchange('RSET\r\n', 1));
        if (everyRecipient || data === undefined) throw everyRecipientRefused(refused);
        throw refusal('the relay refused DATA', 'EENVELOPE', 'DATA', data);
      }
      const next = takeNext();
      const text = dotStuffed(job.message) + (next === undefined ? '' : envelopeText(next.envelope));
      written = !connection.closed;
      const [end, ...nextReplies] = connection.exchange(
        text,
        1 + (next === undefined ? 0 : next.envelope.to.length + 2),
      );
      if (next !== undefined) {
        pipelined = { job: next, replies: Promise.all(nextReplies).then(byCommand) };
        // Awaited by the next turn; a connection that dies before then must not make it an unhandled rejection.
        pipelined.replies.catch(() => {});
      }
      const reply = await (end as Promise<Reply>);
      if (!positive(reply)) throw refusal('the relay refused the message', 'EMESSAGE', 'DATA', reply);
      job.resolve({
        refused: refused.map(({ reply }) =>
          refusal('the relay refused a recipient', 'EENVELOPE', 'RCPT TO', reply),
        ),
      });
    } catch (err) {
      if (!written && connection.closed && !job.requeued && !closed) {
        job.requeued = true;
        queue.unshift(job);
      } else job.reject(err);
    }
    return pipelined;
  }

  return {
    send(envelope, message) {
      if (closed) return Promise.reject(closedError());
      return new Promise((resolve, reject) =>
        dispatch({ envelope, message, resolve, reject, requeued: false }),
      );
    },
    close() {
      closed = true;
      const err = closedError();
      for (const job of queue.splice(0)) job.reject(err);
      for (const waiting of idle.splice(0)) waiting(undefined);
    },
  };
}

function positive(reply: Reply): boolean {
  return reply.code >= 200 && reply.code < 300;
}

/**
 * MAIL FROM, every RCPT TO and DATA: in one piece where the relay pipelines; else one by one, the recipients only
 * after a sender it took, DATA only after a recipient it took.
 */
async function envelopeReplies(connection: SmtpConnection, envelope: Envelope): Promise<EnvelopeReplies> {
  if (connection.pipelining) {
    return byCommand(await Promise.all(connection.exchange(envelopeText(envelope), envelope.to.length + 2)));
  }
  const one = (line: string) => connection.exchange(`${line}\r\n`, 1)[0] as Promise<Reply>;
  const mail = await one(`MAIL FROM:<${envelope.from}>${smtpUtf8(envelope)}`);
  if (!positive(mail)) return { mail, recipients: [] };
  const recipients: Reply[] = [];
  for (const address of envelope.to) recipients.push(await one(`RCPT TO:<${address}>`));
  return recipients.some(positive) ? { mail, recipients, data: await one('DATA') } : { mail, recipients };
}

/** An envelope's replies in the order they came: MAIL FROM, each RCPT TO, DATA. */
function byCommand([mail, ...rest]: Reply[]): EnvelopeReplies {
  return { mail: mail as Reply, recipients: rest.slice(0, -1), data: rest.at(-1) };
}

function envelopeText(envelope: Envelope): string {
  const { from, to } = envelope;
  const recipients = to.map((address) => `RCPT TO:<${address}>\r\n`).join('');
  return `MAIL FROM:<${from}>${smtpUtf8(envelope)}\r\n${recipients}DATA\r\n`;
}

/** Addresses with non-ASCII local parts need the relay's SMTPUTF8; a relay without it refuses them, for good. */
function smtpUtf8({ from, to }: Envelope): string {
  return /[^ -~]/.test(from + to.join('')) ? ' SMTPUTF8' : '';
}

/** The message as DATA carries it: a line that starts with a dot gets another, and a lone dot ends it. */
function dotStuffed(message: string): string {
  const stuffed =
    message.startsWith('.') || message.includes('\n.') ? message.replace(/^\./gm, '..') : message;
  return stuffed.endsWith('\r\n') ? `${stuffed}.\r\n` : `${stuffed}\r\n.\r\n`;
}

function everyRecipientRefused(refused: Array<{ address: string; reply: Reply }>): Error {
  // A recipient refused for now (4xx) makes the whole refusal one for now: the message is tried again later.
  const deciding = refused.find(({ reply }) => reply.code < 500) ?? refused[refused.length - 1];
  const reply = deciding?.reply ?? { code: 0, text: '' };
  return Object.assign(refusal('the relay refused every recipient', 'EENVELOPE', 'RCPT TO', reply), {
    rejected: refused.map(({ address }) => address),
  });
}
