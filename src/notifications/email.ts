import type { SendMailOptions } from 'nodemailer';
import type { OutboxMail } from './outbox.js';

const STATUS_TEXT: Record<string, string> = {
  Open: 'is open',
  InProcess: 'is in process',
  DeliveryBlocked: 'is blocked for delivery',
  PartiallyDelivered: 'is partially delivered',
  Delivered: 'is delivered',
  Rejected: 'was rejected',
};

/**
 * The email for one notification. Header values are only the validated order key, a status from our own
 * fixed set and a date we formatted: nothing from S/4HANA free text reaches a header. Free text goes into the
 * body only, escaped for HTML.
 */
export function renderEmail(mail: OutboxMail, from: string): SendMailOptions {
  const status = STATUS_TEXT[mail.portalStatus] ?? mail.portalStatus;
  const date = mail.requestedDeliveryDate ?? 'not set';
  const lines = [
    `Sales order ${mail.salesOrder} ${status}.`,
    `Requested delivery date: ${date}`,
    `Customer reference: ${mail.customerReference ?? '-'}`,
    `Sold-to party: ${mail.soldToParty ?? '-'}`,
  ];
  return {
    from,
    to: mail.recipients,
    subject: `Sales order ${mail.salesOrder}: ${mail.portalStatus}`,
    messageId: mail.messageId,
    headers: {
      'X-Sales-Order': mail.salesOrder,
      'X-Portal-Status': mail.portalStatus,
      // An order without a date gets no such header: nodemailer never writes a header with an empty value,
      // so "absent" is how a reader tells "no date".
      ...(mail.requestedDeliveryDate === null
        ? {}
        : { 'X-Requested-Delivery-Date': mail.requestedDeliveryDate }),
    },
    text: `${lines.join('\n')}\n`,
    html: `<p>${lines.map(escapeHtml).join('<br>\n')}</p>\n`,
  };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
