// The two loops that send what a transaction queued: the mail sender with its transport, and, with a portal
// destination, the portal push sender. Built here, started by startService.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/loadConfig.js';
import { type FamilyModule, mailKinds, pushKinds } from '../families/index.js';
import { newLeaseHolder } from '../leasedOutbox/leaseHolder.js';
import { createMailSender, type MailSender } from '../notifications/mailSender.js';
import { directoryTransport, type MailTransport, smtpTransport } from '../notifications/mailTransport.js';
import { createPortalApi } from '../portal/portalApi.js';
import { createPortalSender, type PortalSender } from '../portal/portalSender.js';
import type { Metrics } from './metrics.js';

export interface OutboxSenders {
  transport: MailTransport;
  mailSender: MailSender;
  /** Undefined when PORTAL_DESTINATION is unset. */
  portalSender: PortalSender | undefined;
}

export function createOutboxSenders(
  config: Readonly<Config>,
  families: readonly FamilyModule[],
  pool: Pool,
  metrics: Metrics,
  logger: Logger,
  pollMs: number | undefined,
): OutboxSenders {
  const transport: MailTransport =
    config.mail.transport.kind === 'smtp'
      ? smtpTransport(config.mail.transport.url)
      : directoryTransport(config.mail.transport.dir);
  // One name for both loops: whose claim a row's lease was, whichever outbox it is in.
  const holder = newLeaseHolder();
  const mailSender = createMailSender({
    pool,
    transport,
    families: mailKinds(config, families),
    from: config.mail.from,
    locale: config.mail.locale,
    logger: logger.child({ component: 'mail' }),
    onResult: metrics.mail,
    pollMs,
    leaseSeconds: config.mail.leaseSeconds,
    holder,
  });
  const pushes = pushKinds(families);
  const portalSender =
    config.portal === undefined
      ? undefined
      : createPortalSender({
          pool,
          portal: createPortalApi({ ...config.portal, families: pushes }),
          families: pushes,
          logger: logger.child({ component: 'portal' }),
          onResult: metrics.portalPush,
          pollMs,
          leaseSeconds: config.portal.leaseSeconds,
          holder,
        });
  return { transport, mailSender, portalSender };
}
