// What the mail sender asks of an event family: which outbox rows are its (mail_outbox.family), what its key is
// called, and how a row becomes an email. The composition root hands the families in.
import type { ClaimedMail } from './mailOutbox.js';

/** What every family's email is rendered with: the sender and MAIL_LOCALE. */
export interface MailSettings {
  from: string;
  locale: string;
}

/** A family's email, before it is composed into what goes over SMTP (mime.ts), which adds its Date. */
export interface RenderedEmail {
  from: string;
  to: string[];
  subject: string;
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  /** The family's machine-readable headers (X-…), by which readers sort and filter its emails. */
  headers: Record<string, string>;
  text: string;
  html: string;
}

export interface MailKind {
  /** mail_outbox.family of its rows: the family's name. */
  family: string;
  /** The key's name in log lines and in span attributes. */
  logKey: string;
  spanKey: string;
  /** The email of a row of its family; throws a PermanentError on content the family never wrote. */
  render(mail: ClaimedMail, settings: MailSettings): RenderedEmail;
}

/** The family of a mail_outbox row; undefined for a family that sends no mail. */
export function mailKindOf(kinds: readonly MailKind[], family: string): MailKind | undefined {
  return kinds.find((kind) => kind.family === family);
}
