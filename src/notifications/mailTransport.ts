import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { type ErrorFields, errorFields } from '../telemetry/errorFields.js';
import type { RenderedEmail } from './mailKind.js';
import { composeEmail } from './mime.js';

/** What a relay that took the message said about recipients it refused: their replies, never their addresses. */
export interface SendReport {
  refused: ErrorFields[];
}

export interface MailTransport {
  send(mail: RenderedEmail): Promise<SendReport>;
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
  return {
    async send(mail) {
      // The message, composed whole, is handed over as one chunk. A relay that refuses every recipient fails the
      // send; one that refuses some takes the message for the rest.
      const info: { rejectedErrors?: unknown[] } = await transporter.sendMail(composed(mail));
      return { refused: (info.rejectedErrors ?? []).map((err) => errorFields(err)) };
    },
    close: () => transporter.close(),
  };
}

/** Writes each email as an .eml file instead of sending it: for local runs and the demo. */
export function directoryTransport(dir: string): MailTransport {
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(mail) {
      const { message } = await transporter.sendMail(composed(mail));
      await mkdir(dir, { recursive: true });
      const name = `${String(mail.messageId).replace(/[^A-Za-z0-9@.-]/g, '')}.eml`;
      await writeFile(join(dir, name), message as Buffer);
      return { refused: [] };
    },
    close: () => transporter.close(),
  };
}

/** The finished message for nodemailer to send as it is; the Message-ID spares it making one of its own. */
function composed(mail: RenderedEmail) {
  return { ...composeEmail(mail), messageId: mail.messageId };
}
