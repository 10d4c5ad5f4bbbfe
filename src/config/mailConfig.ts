// How the notification email is sent, from whom, to whom and in which language.
import { catalogLanguage, LANGUAGES } from '../notifications/languages.js';
import { smtpSettings } from '../notifications/smtpSettings.js';
import type { EnvReader } from './envReader.js';

/** How mail leaves: by SMTP, or as .eml files written to a directory (local runs, the demo). */
export type MailTransportSettings = { kind: 'smtp'; url: string } | { kind: 'directory'; dir: string };

export interface MailSettings {
  transport: MailTransportSettings;
  from: string;
  to: string[];
  /** The right-hand side of the Message-IDs the service writes: the sender's domain. */
  messageIdDomain: string;
  leaseSeconds: number;
  /** BCP 47 tag of a language with a catalog; mail_recipient.locale overrides it per sold-to party. */
  locale: string;
}

export function mailConfig(read: EnvReader): MailSettings {
  const { problems } = read;
  const smtpUrl = read.optional('SMTP_URL');
  const dir = read.optional('MAIL_DIR');
  let transport: MailTransportSettings = { kind: 'directory', dir: '' };
  if (smtpUrl !== undefined && dir === undefined) {
    transport = { kind: 'smtp', url: smtpUrl };
    problems.push(...smtpSettings(smtpUrl).problems);
  } else if (dir !== undefined && smtpUrl === undefined) transport = { kind: 'directory', dir };
  else problems.push('set exactly one of SMTP_URL (send by SMTP) and MAIL_DIR (write .eml files)');
  const from = read.text('MAIL_FROM', 'fleet-order-notifier@localhost');
  const to = read.list('MAIL_TO');
  if (to.length === 0) problems.push('MAIL_TO needs at least one recipient');
  const locale = read.text('MAIL_LOCALE', 'en');
  if (catalogLanguage(locale) === undefined) {
    problems.push(
      `MAIL_LOCALE must be a language tag of ${LANGUAGES.join(', ')} (e.g. de or de-AT), got "${locale}"`,
    );
  }
  return {
    transport,
    from,
    to,
    messageIdDomain: from.split('@')[1] || 'fleet-order-notifier',
    // How long a claimed mail is reserved for its sender, renewed every third of it while the send runs:
    // after a crash mid-send it goes again at most this much later. Short: renewal, not length, covers slow sends.
    leaseSeconds: read.int('MAIL_LEASE_SECONDS', 15, 5, 3600),
    locale,
  };
}
