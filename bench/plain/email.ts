// The plain consumer's email: a short text and HTML body from the outbox row, sent through nodemailer's pooled
// SMTP transport with its defaults, written for this consumer alone.
import type { SendMailOptions } from 'nodemailer';
import nodemailer from 'nodemailer';
import type { QueuedMail } from './tables.js';

const FROM = 'notifier@fleet.example';

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderEmail(mail: QueuedMail): SendMailOptions {
  const date = mail.requestedDeliveryDate;
  const change =
    mail.previousPortalStatus === null
      ? 'New order.'
      : `Was ${mail.previousPortalStatus}, requested delivery ${mail.previousRequestedDeliveryDate ?? 'not set'}.`;
  const lines = [
    `Sales order ${mail.salesOrder}`,
    change,
    `Status: ${mail.portalStatus}`,
    `Requested delivery date: ${date ?? 'not set'}`,
    `Customer reference: ${mail.customerReference ?? '-'}`,
    `Sold-to party: ${mail.soldToParty ?? '-'}`,
  ];
  return {
    from: FROM,
    to: mail.recipients,
    subject: `Sales order ${mail.salesOrder}: ${mail.portalStatus}, delivery ${date ?? 'not set'}`,
    messageId: mail.messageId,
    ...(mail.inReplyTo === null ? {} : { inReplyTo: mail.inReplyTo, references: [mail.inReplyTo] }),
    headers: {
      'X-Sales-Order': mail.salesOrder,
      'X-Portal-Status': mail.portalStatus,
      ...(date === null ? {} : { 'X-Requested-Delivery-Date': date }),
    },
    text: `${lines.join('\n')}\n`,
    html: `<p>${lines.map(escapeHtml).join('<br>\n')}</p>\n`,
  };
}

export interface Mailer {
  send(mail: SendMailOptions): Promise<void>;
  close(): void;
}

export function smtpMailer(smtpUrl: string): Mailer {
  const transporter = nodemailer.createTransport({ url: smtpUrl, pool: true });
  return {
    async send(mail) {
      await transporter.sendMail(mail);
    },
    close: () => transporter.close(),
  };
}
