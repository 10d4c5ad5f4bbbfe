import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ErrorFields, errorFields } from '../telemetry/errorFields.js';
import type { RenderedEmail } from './mailKind.js';
import { composeEmail } from './mime.js';
import { smtpPool } from './smtpPool.js';
import { smtpSettings } from './smtpSettings.js';

/** What a relay that took the message said about recipients it refused: their replies, never their addresses. */
export interface SendReport {
  refused: ErrorFields[];
}

export interface MailTransport {
  send(mail: RenderedEmail): Promise<SendReport>;
  close(): void;
}

/**
 * SMTP over a few kept connections (smtpPool.ts), as SMTP_URL describes the relay (smtpSettings.ts). A relay
 * that refuses every recipient fails the send; one that refuses some takes the message for the rest.
 */
export function smtpTransport(smtpUrl: string): MailTransport {
  const { settings, problems } = smtpSettings(smtpUrl);
  if (settings === undefined) throw new Error(problems.join('; '));
  const pool = smtpPool(settings);
  return {
    async send(mail) {
      const { envelope, raw } = composeEmail(mail);
      const { refused } = await pool.send(envelope, raw);
      return { refused: refused.map((err) => errorFields(err)) };
    },
    close: () => pool.close(),
  };
}

/** Writes each email as an .eml file instead of sending it: for local runs and the demo. */
export function directoryTransport(dir: string): MailTransport {
  return {
    async send(mail) {
      const { raw } = composeEmail(mail);
      await mkdir(dir, { recursive: true });
      const name = `${String(mail.messageId).replace(/[^A-Za-z0-9@.-]/g, '')}.eml`;
      await writeFile(join(dir, name), raw.replace(/\r\n/g, '\n'));
      return { refused: [] };
    },
    close: () => {},
  };
}
