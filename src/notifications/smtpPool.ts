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

/** A job whose envelope went out behind the last message, with the replies the relay owes for it. */
interface Pipelined {
  job: Job;
  replies: Promise<Reply[]>;
}

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
    let owed: Promise<Reply[]> | undefined;
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
    owed: Promise<Reply[]> | undefined,
    takeNext: () => Job | undefined,
  ): Promise<Pipelined | undefined> {
    let written = false;
    let pipelined: Pipelined | undefined;
    try {
      const { envelope } = job;
      const replies = await (owed ?? envelopeReplies(connection, envelope));
      const [mail, ...rest] = replies;
      if (mail === undefined || !positive(mail)) {
        throw refusal('the relay refused the sender', 'EENVELOPE', 'MAIL FROM', mail ?? noReply);
      }
      const refused: Error[] = [];
      const rejected: string[] = [];
      envelope.to.forEach((address, i) => {
        const reply = rest[i];
        if (reply !== undefined && positive(reply)) return;
        rejected.push(address);
        refused.push(refusal('the relay refused a recipient', 'EENVELOPE', 'RCPT TO', reply ?? noReply));
      });
      const data = rest[envelope.to.length];
      if (data?.code !== 354 || rejected.length === envelope.to.length) {
        if (data?.code === 354) {
          // A relay that opened DATA with no recipient: an empty message ends it, delivered to nobody.
          await Promise.all(connection.exchange('.\r\n', 1));
        }
        // The relay may still hold the sender: clear it for the next message.
        await Promise.all(connection.exchange('RSET\r\n', 1));
        if (rejected.length === envelope.to.length) throw everyRecipientRefused(refused, rejected);
        throw refusal('the relay refused DATA', 'EENVELOPE', 'DATA', data ?? noReply);
      }
      const next = takeNext();
      const text = dotStuffed(job.message) + (next === undefined ? '' : envelopeText(next.envelope));
      written = !connection.closed;
      const [end, ...nextReplies] = connection.exchange(
        text,
        1 + (next === undefined ? 0 : next.envelope.to.length + 2),
      );
      if (next !== undefined) {
        pipelined = { job: next, replies: Promise.all(nextReplies) };
        // Awaited by the next turn; a connection that dies before then must not make it an unhandled rejection.
        pipelined.replies.catch(() => {});
      }
      const reply = await (end as Promise<Reply>);
      if (!positive(reply)) throw refusal('the relay refused the message', 'EMESSAGE', 'DATA', reply);
      job.resolve({ refused });
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
      if (closed) {
        return Promise.reject(
          smtpError('transient', 'the mail transport is closed', { code: 'ECONNECTION' }),
        );
      }
      return new Promise((resolve, reject) =>
        dispatch({ envelope, message, resolve, reject, requeued: false }),
      );
    },
    close() {
      closed = true;
      const err = smtpError('transient', 'the mail transport is closed', { code: 'ECONNECTION' });
      for (const job of queue.splice(0)) job.reject(err);
      for (const waiting of idle.splice(0)) waiting(undefined);
    },
  };
}

const noReply: Reply = { code: 0, text: '' };

function positive(reply: Reply): boolean {
  return reply.code >= 200 && reply.code < 300;
}

/**
 * MAIL FROM, every RCPT TO and DATA: in one piece where the relay pipelines; else one by one, the recipients only
 * after a sender it took, DATA only after a recipient it took.
 */
async function envelopeReplies(connection: SmtpConnection, envelope: Envelope): Promise<Reply[]> {
  if (connection.pipelining) {
    return Promise.all(connection.exchange(envelopeText(envelope), envelope.to.length + 2));
  }
  const lines = envelopeText(envelope).split(/(?<=\r\n)/);
  const replies: Reply[] = [];
  for (const line of lines) {
    const isData = line === 'DATA\r\n';
    if (replies.length === 1 && !positive(replies[0] as Reply)) break;
    if (isData && !replies.slice(1).some(positive)) break;
    replies.push(await (connection.exchange(line, 1)[0] as Promise<Reply>));
  }
  return replies;
}

function envelopeText({ from, to }: Envelope): string {
  // Addresses with non-ASCII local parts need the relay's SMTPUTF8; a relay without it refuses them, for good.
  const utf8 = /[^ -~]/.test(from + to.join('')) ? ' SMTPUTF8' : '';
  return `MAIL FROM:<${from}>${utf8}\r\n${to.map((address) => `RCPT TO:<${address}>\r\n`).join('')}DATA\r\n`;
}

/** The message as DATA carries it: a line that starts with a dot gets another, and a lone dot ends it. */
function dotStuffed(message: string): string {
  const stuffed =
    message.startsWith('.') || message.includes('\n.') ? message.replace(/^\./gm, '..') : message;
  return stuffed.endsWith('\r\n') ? `${stuffed}.\r\n` : `${stuffed}\r\n.\r\n`;
}

function everyRecipientRefused(refused: Error[], rejected: string[]): Error {
  // A recipient refused for now (4xx) makes the whole refusal one for now: the message is tried again later.
  const replies = refused.map((err) => err as Error & { responseCode?: number; response?: string });
  const deciding = replies.find((err) => (err.responseCode ?? 0) < 500) ?? replies[replies.length - 1];
  const reply = { code: deciding?.responseCode ?? 0, text: deciding?.response ?? '' };
  return Object.assign(refusal('the relay refused every recipient', 'EENVELOPE', 'RCPT TO', reply), {
    rejected,
  });
}
