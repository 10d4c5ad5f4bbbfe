// The mail outbox's sender: claims due emails, has each rendered by its family and sent over SMTP, then books
// how the send ended (sent, retried later, or parked for an operator).
import { classify, failureReason, PermanentError } from '../errors.js';
import { createLeasedLoop, type LeasedLoop, type LeasedSenderOptions } from '../leasedOutbox/leasedLoop.js';
import { whileBusy } from '../leasedOutbox/whileBusy.js';
import { BOOKING_RETRY, retry } from '../retry.js';
import { inSpan, linkTo, ROOT_CONTEXT, SpanKind } from '../telemetry/tracing.js';
import { catalogLanguage } from './languages.js';
import { type MailKind, mailKindOf } from './mailKind.js';
import {
  type ClaimedMail,
  claimDue,
  type Lease,
  markSent,
  park,
  renewLeases,
  scheduleRetry,
} from './mailOutbox.js';
import type { MailTransport, SendReport } from './mailTransport.js';

/**
 * How one email's turn ended; `resent`: SMTP accepted it but the `sent` mark failed, so it goes again;
 * `partial`: the relay took it for some recipients and refused the others, and it is marked sent.
 */
export type MailResult = 'sent' | 'partial' | 'retry' | 'parked' | 'resent';

export interface MailSenderOptions extends LeasedSenderOptions<MailResult> {
  transport: MailTransport;
  /** The event families: each renders the rows that name it. */
  families: readonly MailKind[];
  from: string;
  /** MAIL_LOCALE, for emails queued without a locale of their own (default en). */
  locale?: string;
  maxAttempts?: number;
}

/** A log line's logger: the sender's, naming one email. */
type Log = MailSenderOptions['logger'];

/** wake(): called after a commit that queued mail. */
export type MailSender = LeasedLoop;

// Thirty-two per connection of the SMTP transport (4, smtpSettings.ts): each connection has its next emails at hand
// to pipeline behind the one it sends, and claims come once half the slots are free, so one claim serves
// sixty-four sends. A claim is a transaction of four round trips to the database, and while events keep the event
// loop busy each of them waits its turn: the connections must still have emails queued when the claim returns, or
// the emails fall behind the events and trail them. A slot is the SMTP conversation only: the `sent` mark after it
// runs beside the next send. Many more would hold mail another instance could send now.
const DEFAULT_CONCURRENCY = 128;

/**
 * Sends the outbox after commit. Safe with several instances: rows are claimed with SKIP LOCKED and leased
 * for a short time, renewed while the send runs, so a crash delays its mail by about one lease. Only the
 * oldest pending email of a conversation is claimed (mailOutbox.ts), so its emails go out in outbox order.
 * Transient SMTP failures are retried with exponential backoff; permanent ones, or too many tries, park the
 * mail for an operator.
 */
export function createMailSender(options: MailSenderOptions): MailSender {
  const { pool, transport, from, logger } = options;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const pollMs = options.pollMs ?? 1000;
  const maxAttempts = options.maxAttempts ?? 10;
  const leaseSeconds = options.leaseSeconds ?? 15;
  const email = { from, locale: options.locale ?? 'en' };
  // Sends that end while a mark is in flight are marked together in the next: a commit per email would cost the
  // database several times the CPU of a shared one. A mark that lands within its retries lands before any other
  // instance could claim the email again.
  const recordSent = whileBusy((ids: string[]) => retry(() => markSent(pool, ids), BOOKING_RETRY));

  async function deliver(mail: ClaimedMail, slotDone: () => void): Promise<void> {
    // The row names its family, which renders it and names its key.
    const family = mailKindOf(options.families, mail.family);
    const key = family === undefined ? {} : { [family.logKey]: mail.key };
    const log = logger.child({ ...key, mailId: mail.id, messageId: mail.messageId });
    if (mail.locale !== null && catalogLanguage(mail.locale) === undefined) {
      log.warn(
        { locale: mail.locale, fallback: email.locale },
        'no catalog for the locale; sending in MAIL_LOCALE',
      );
    }
    let report: SendReport;
    try {
      report = await send(mail, family);
    } catch (err) {
      slotDone();
      await bookFailure(mail, err, log);
      return;
    }
    slotDone();
    await bookSent(mail, report, log);
  }

  /** The SMTP conversation, in its own trace linked to the event's: it happens later, maybe on another instance. */
  function send(mail: ClaimedMail, family: MailKind | undefined): Promise<SendReport> {
    return inSpan(
      'send mail',
      {
        kind: SpanKind.CLIENT,
        links: linkTo(mail.traceParent),
        attributes: {
          ...(family === undefined ? {} : { [family.spanKey]: mail.key }),
          'fon.mail_id': mail.id,
          'fon.attempt': mail.attempts,
        },
      },
      ROOT_CONTEXT,
      async () => {
        // A family the database holds but no family module renders: an operator's to see, not to retry.
        if (family === undefined) throw new PermanentError(`no event family ${mail.family} sends mail`);
        return transport.send(family.render(mail, email));
      },
    );
  }

  /** A failed send: parked when permanent or out of attempts, else retried after a backoff. */
  async function bookFailure(mail: ClaimedMail, err: unknown, log: Log): Promise<void> {
    const error = failureReason(err);
    if (classify(err) === 'permanent' || mail.attempts >= maxAttempts) {
      await park(pool, mail.id, error);
      log.error({ err, attempts: mail.attempts }, 'mail parked');
      options.onResult?.('parked');
    } else {
      const delaySeconds = Math.min(600, 2 ** mail.attempts) * (0.5 + Math.random() / 2);
      await scheduleRetry(pool, mail.id, delaySeconds, error);
      log.warn({ err, attempts: mail.attempts, delaySeconds }, 'mail send failed, will retry');
      options.onResult?.('retry');
    }
  }

  /** A send SMTP accepted: marked sent, whatever recipients the relay refused. */
  async function bookSent(mail: ClaimedMail, report: SendReport, log: Log): Promise<void> {
    // If the process dies right here, the lease runs out and the mail goes again with the same Message-ID.
    try {
      await recordSent(mail.id);
    } catch (err) {
      log.error({ err }, 'mail sent but not recorded; it goes again when its lease runs out');
      options.onResult?.('resent');
      return;
    }
    if (report.refused.length > 0) {
      // Sending again would repeat the email to those who got it: the refusal is the operator's to see.
      log.warn({ refused: report.refused }, 'mail refused for some recipients');
      options.onResult?.('partial');
      return;
    }
    log.info('mail sent');
    options.onResult?.('sent');
  }

  return createLeasedLoop<ClaimedMail>({
    what: 'mail',
    claim: (free) => claimDue(pool, free, leaseSeconds, options.holder),
    key: (mail) => mail.id,
    deliver,
    freesAnother: (mail) => mail.nextPending,
    renew: async (mails) =>
      renewLeases(
        pool,
        mails.map((mail): Lease => ({ id: mail.id, attempts: mail.attempts })),
        leaseSeconds,
      ),
    logger,
    concurrency,
    pollMs,
    leaseSeconds,
  });
}
