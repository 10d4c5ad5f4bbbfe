import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { type ErrorFields, errorFields } from '../telemetry/errorFields.js';

/** What a relay that took the message said about recipients it refused: their replies, never their addresses. */
export interface SendReport {
  refused: ErrorFields[];
}

export interface MailTransport {
  send(mail: SendMailOptions): Promise<SendReport>;
  close(): void;
}

/**
 * SMTP through nodemailer's pooled transport: one connection per email would cost a TCP and SMTP handshake
 * each time, and so would nodemailer's default of a new connection every 100 messages: a connection is kept
 * until the relay or an idle timeout ends it. nodemailer sends MAIL FROM, RCPT TO and DATA in one write where the
 * relay offers PIPELINING. Query parameters of SMTP_URL (e.g. `?pool=false`, `?maxMessages=100` for a relay that
 * limits messages per connection) still override these defaults.
 */
export function smtpTransport(smtpUrl: string): MailTransport {
  const url = new URL(smtpUrl);
  for (const [key, value] of Object.entries({
    pool: 'true',
    maxConnections: '4',
    maxMessages: 'Infinity',
    connectionTimeout: '10000',
    greetingTimeout: '10000',
    socketTimeout: '30000',
  })) {
    if (!url.searchParams.has(key)) url.searchParams.set(key, value);
  }
  const transporter = nodemailer.createTransport(url.toString());
  // nodemailer streams a message part by part, and each part became a socket write of its own (nine for one of
  // these emails, each waking the server): gathered, the message leaves in one.
  transporter.use('stream', (message, done) => {
    message.message.transform(gathered());
    done();
  });
  return {
    async send(mail) {
      // A relay that refuses every recipient fails the send; one that refuses some takes the message for the rest.
      const info: { rejectedErrors?: unknown[] } = await transporter.sendMail(mail);
      return { refused: (info.rejectedErrors ?? []).map((err) => errorFields(err)) };
    },
    close: () => transporter.close(),
  };
}

/** Passes a whole stream on as one chunk, at its end. */
function gathered(): Transform {
  const chunks: Buffer[] = [];
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
    flush(callback) {
      callback(null, Buffer.concat(chunks));
    },
  });
}

/** Writes each email as an .eml file instead of sending it: for local runs and the demo. */
export function directoryTransport(dir: string): MailTransport {
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(mail) {
      const { message } = await transporter.sendMail(mail);
      await mkdir(dir, { recursive: true });
      const name = `${String(mail.messageId).replace(/[^A-Za-z0-9@.-]/g, '')}.eml`;
      await writeFile(join(dir, name), message as Buffer);
      return { refused: [] };
    },
    close: () => transporter.close(),
  };
}
