// What the mail sender asks of an event family: which outbox rows are its (mail_outbox.kind), what its key is
// called and is, and how a row becomes an email. The composition root hands the families in.
import type { SendMailOptions } from 'nodemailer';
import type { ClaimedMail } from './mailOutbox.js';

/** What every family's email is rendered with: the sender and MAIL_LOCALE. */
export interface MailSettings {
  from: string;
  locale: string;
}

// Methods, not function properties: a family typed by its own rows still counts as a MailKind of any row, and
// the row's kind is what chose the family.
export interface MailKind<Mail extends ClaimedMail = ClaimedMail> {
  /** mail_outbox.kind of its rows. */
  kind: string;
  /** The key's name in log lines and in span attributes. */
  logKey: string;
  spanKey: string;
  keyOf(mail: Mail): string;
  render(mail: Mail, settings: MailSettings): SendMailOptions;
}
