// The email for one change of a delivery's status, from what its outbox row records. Pure.
import { contentOf } from '../../../src/db/content.js';
import { fillMessage, statusText } from '../../../src/notifications/catalogText.js';
import { catalogLanguage } from '../../../src/notifications/languages.js';
import type { MailSettings, RenderedEmail } from '../../../src/notifications/mailKind.js';
import type { ClaimedMail } from '../../../src/notifications/mailOutbox.js';
import { escapeHtml } from '../../../src/notifications/mailText.js';
import { DELIVERY_CATALOGS } from './catalogs.js';

export function renderDeliveryEmail(mail: ClaimedMail, settings: MailSettings): RenderedEmail {
  const content = contentOf(`email ${mail.id} of outbound delivery ${mail.key}`, mail.content);
  const status = content.text('status');
  const previous = content.optionalText('previousStatus');
  const catalog = DELIVERY_CATALOGS[catalogLanguage(mail.locale ?? settings.locale) ?? 'en'];
  const word = (value: string) => statusText(catalog, value, 'status');
  const line =
    previous === null
      ? fillMessage(catalog.new, { status: word(status) })
      : fillMessage(catalog.changed, { from: word(previous), to: word(status) });
  return {
    from: settings.from,
    to: mail.recipients,
    subject: fillMessage(catalog.subject, { delivery: mail.key, status: word(status) }),
    messageId: mail.messageId,
    ...(mail.inReplyTo === null ? {} : { inReplyTo: mail.inReplyTo, references: [mail.inReplyTo] }),
    headers: { 'X-Outbound-Delivery': mail.key, 'X-Delivery-Status': status },
    text: `${line}\n`,
    html: `<p>${escapeHtml(line)}</p>\n`,
  };
}
