import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { renderEmail } from '../../src/notifications/email.js';
import type { OutboxMail } from '../../src/notifications/outbox.js';

const mail: OutboxMail = {
  id: '7',
  salesOrder: '1000473',
  portalStatus: 'PartiallyDelivered',
  requestedDeliveryDate: '2026-12-15',
  soldToParty: '17100001',
  customerReference: '<b>PO</b> & "Co"\r\nBcc: intruder@example.com',
  recipients: ['fleet@example.com'],
  messageId: '<n-7@fleet.example>',
  attempts: 1,
};

/** The message exactly as it would go over SMTP. */
async function compose(options: OutboxMail): Promise<string> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const { message } = await transport.sendMail(renderEmail(options, 'notifier@fleet.example'));
  return (message as Buffer).toString('utf8');
}

describe('notification email', () => {
  it('carries the order headers and the fixed Message-ID', async () => {
    const raw = await compose(mail);
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(head).toContain('X-Sales-Order: 1000473');
    expect(head).toContain('X-Portal-Status: PartiallyDelivered');
    expect(head).toContain('X-Requested-Delivery-Date: 2026-12-15');
    expect(head).toContain('Message-ID: <n-7@fleet.example>');
    expect(head).toContain('Subject: Sales order 1000473: PartiallyDelivered');
  });

  it('keeps S/4HANA free text out of the headers and escapes it in HTML', async () => {
    const raw = await compose(mail);
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(head).not.toMatch(/intruder/);
    const { html, text } = renderEmail(mail, 'notifier@fleet.example');
    expect(html).toContain('&#60;b&#62;PO&#60;/b&#62; &#38; &#34;Co&#34;');
    expect(html).not.toContain('<b>');
    expect(text).toContain('Customer reference: <b>PO</b>');
  });

  it('leaves out the delivery-date header when the order has no date', async () => {
    const raw = await compose({ ...mail, requestedDeliveryDate: null });
    expect(raw).not.toContain('X-Requested-Delivery-Date');
    expect(raw).toContain('Requested delivery date: not set');
  });
});
