import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { classify, failureReason } from '../errors.js';
import { renderEmail } from './email.js';
import type { MailTransport } from './mailTransport.js';
import { catalogLanguage } from './messages.js';
import { claimDue, markSent, type OutboxMail, park, scheduleRetry } from './outbox.js';

export interface MailSenderOptions {
  pool: Pool;
  transport: MailTransport;
  from: string;
  /** MAIL_LOCALE, for emails queued without a locale of their own (default en). */
  locale?: string;
  /** PORTAL_ORDER_URL: a template with `{salesOrder}`; each email links to its order. */
  portalOrderUrl?: string | undefined;
  logger: Logger;
  /** Called once per email with how it ended. */
  onResult?: (result: 'sent' | 'retry' | 'parked') => void;
  batchSize?: number;
  pollMs?: number;
  maxAttempts?: number;
  /** Longer than the slowest send may take (nodemailer's timeouts add up to well under this). */
  leaseSeconds?: number;
}

export interface MailSender {
  start(): void;
  /** Looks for due mail now instead of at the next poll: called after a commit that queued mail. */
  wake(): void;
  /** Lets the current batch finish, then stops. */
  stop(): Promise<void>;
}

/**
 * Sends the outbox after commit. Safe with several instances: rows are claimed with SKIP LOCKED and leased.
 * Transient SMTP failures are retried with exponential backoff; permanent ones, or too many tries, park the
 * mail for an operator.
 */
export function createMailSender(options: MailSenderOptions): MailSender {
  const { pool, transport, from, logger } = options;
  const batchSize = options.batchSize ?? 20;
  const pollMs = options.pollMs ?? 1000;
  const maxAttempts = options.maxAttempts ?? 10;
  const leaseSeconds = options.leaseSeconds ?? 120;
  const email = { from, locale: options.locale ?? 'en', portalOrderUrl: options.portalOrderUrl };
  let running = false;
  let loop: Promise<void> | undefined;
  let wakeUp = new AbortController();

  async function deliver(mail: OutboxMail): Promise<void> {
    const log = logger.child({ salesOrder: mail.salesOrder, mailId: mail.id, messageId: mail.messageId });
    if (mail.locale !== null && catalogLanguage(mail.locale) === undefined) {
      log.warn(
        { locale: mail.locale, fallback: email.locale },
        'no catalog for the locale; sending in MAIL_LOCALE',
      );
    }
    try {
      await transport.send(renderEmail(mail, email));
    } catch (err) {
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
      return;
    }
    // If the process dies right here, the lease runs out and the mail goes again with the same Message-ID.
    await markSent(pool, mail.id);
    log.info('mail sent');
    options.onResult?.('sent');
  }

  async function run(): Promise<void> {
    while (running) {
      let claimed = 0;
      try {
        const due = await claimDue(pool, batchSize, leaseSeconds);
        claimed = due.length;
        await Promise.all(
          due.map((mail) => deliver(mail).catch((err) => logger.error({ err }, 'mail bookkeeping failed'))),
        );
      } catch (err) {
        logger.warn({ err }, 'mail outbox poll failed');
      }
      if (claimed < batchSize && running) {
        await sleep(pollMs, undefined, { signal: wakeUp.signal }).catch(() => {});
        wakeUp = new AbortController();
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    wake() {
      wakeUp.abort();
    },
    async stop() {
      running = false;
      wakeUp.abort();
      await loop;
    },
  };
}
