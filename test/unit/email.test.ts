import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { type OrderMail, renderEmail, subjectReference } from '../../src/families/salesOrder/email.js';
import { composeEmail } from '../../src/notifications/mime.js';

const mail: OrderMail = {
  salesOrder: '1000473',
  portalStatus: 'PartiallyDelivered',
  requestedDeliveryDate: '2026-12-15',
  soldToParty: '17100001',
  customerReference: '<b>PO</b> & "Co"\r\nBcc: intruder@example.com',
  recipients: ['fleet@example.com'],
  messageId: '<n-7@fleet.example>',
  change: 'new',
  previousPortalStatus: null,
  previousRequestedDeliveryDate: null,
  locale: 'en',
  inReplyTo: null,
};

const settings = { from: 'notifier@fleet.example', locale: 'en' };

/** The message exactly as it goes over SMTP. */
async function compose(options: OrderMail): Promise<string> {
  return composeEmail(renderEmail(options, settings)).raw;
}

function changed(change: Partial<OrderMail>): OrderMail {
  return { ...mail, customerReference: 'CITYCAB-7731 8 electric taxis', change: 'changed', ...change };
}

describe('notification email', () => {
  it('carries the order headers and the fixed Message-ID', async () => {
    const raw = await compose(mail);
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(head).toContain('X-Sales-Order: 1000473');
    expect(head).toContain('X-Portal-Status: PartiallyDelivered');
    expect(head).toContain('X-Requested-Delivery-Date: 2026-12-15');
    expect(head).toContain('Message-ID: <n-7@fleet.example>');
    expect(head).not.toMatch(/In-Reply-To|References/);
  });

  it('keeps S/4HANA free text out of other headers, on one line in the body and escaped in HTML', async () => {
    const raw = await compose(mail);
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(head).not.toMatch(/intruder/);
    expect(head).toContain('Subject: Sales order 1000473 (<b>PO</b>): new order, partially delivered');
    const { html, text } = renderEmail(mail, settings);
    expect(html).toContain('&#60;b&#62;PO&#60;/b&#62; &#38; &#34;Co&#34; Bcc: intruder@example.com');
    expect(html).not.toContain('<b>');
    expect(text).toContain('Customer reference: <b>PO</b> & "Co" Bcc: intruder@example.com\n');
  });

  it('links the order in the portal only when PORTAL_ORDER_URL is set', () => {
    const linked = renderEmail(mail, {
      ...settings,
      portalOrderUrl: 'https://portal.example/orders/{salesOrder}',
    });
    expect(linked.text).toMatch(/\n\nOpen .+: https:\/\/portal\.example\/orders\/1000473\n?$/);
    expect(linked.html).toContain('<a href="https://portal.example/orders/1000473">');
    const plain = renderEmail(mail, settings);
    expect(plain.text).not.toContain('https://');
    expect(plain.html).not.toContain('<a ');
  });

  it('shows a customer reference that looks like an encoded word as the text it is', async () => {
    const raw = await compose({ ...mail, customerReference: '=?utf-8?Q?a=0D=0Ab?=' });
    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe('Sales order 1000473 (=?utf-8?Q?a=0D=0Ab?=): new order, partially delivered');
  });

  it('leaves out the delivery-date header when the order has no date', async () => {
    const raw = await compose({ ...mail, requestedDeliveryDate: null });
    expect(raw).not.toContain('X-Requested-Delivery-Date');
    expect(raw).toContain('Requested delivery date: not set');
  });

  it('says a date set where there was none, and a removed date with the one it replaced', () => {
    const set = renderEmail(changed({ previousPortalStatus: 'PartiallyDelivered' }), settings);
    expect(set.subject).toBe('Sales order 1000473 (CITYCAB-7731): delivery date set to 15 Dec 2026');
    expect(set.text).toContain('Requested delivery date set to 15 Dec 2026\n');
    const removed = renderEmail(
      changed({
        previousPortalStatus: 'PartiallyDelivered',
        previousRequestedDeliveryDate: '2026-12-15',
        requestedDeliveryDate: null,
      }),
      settings,
    );
    expect(removed.subject).toBe('Sales order 1000473 (CITYCAB-7731): delivery date removed');
    expect(removed.text).toContain('Requested delivery date removed (was 15 Dec 2026)\n');
  });

  it('counts one day in the singular and a move back with a minus', () => {
    const one = changed({
      previousPortalStatus: 'PartiallyDelivered',
      previousRequestedDeliveryDate: '2026-12-14',
    });
    expect(renderEmail(one, settings).text).toContain('from 14 Dec 2026 to 15 Dec 2026 (+1 day)');
    const back = changed({
      previousPortalStatus: 'PartiallyDelivered',
      previousRequestedDeliveryDate: '2027-01-12',
    });
    expect(renderEmail(back, settings).text).toContain('from 12 Jan 2027 to 15 Dec 2026 (-28 days)');
    expect(renderEmail({ ...one, locale: 'de' }, settings).text).toContain('(+1 Tag)');
  });

  it('formats dates the way a locale with a region writes them', () => {
    const moved = changed({
      previousPortalStatus: 'PartiallyDelivered',
      previousRequestedDeliveryDate: '2026-12-01',
    });
    expect(renderEmail({ ...moved, locale: 'en-US' }, settings).subject).toContain('moved to Dec 15, 2026');
    expect(renderEmail({ ...moved, locale: 'de-AT' }, settings).subject).toContain(
      'verschoben auf 15. Dez. 2026',
    );
  });

  it('falls back to MAIL_LOCALE for a locale without a catalog, and for emails queued without one', () => {
    expect(renderEmail({ ...mail, locale: 'fr' }, { ...settings, locale: 'de' }).subject).toMatch(
      /^Kundenauftrag/,
    );
    expect(renderEmail({ ...mail, locale: null }, { ...settings, locale: 'de' }).subject).toMatch(
      /^Kundenauftrag/,
    );
  });

  it('states the current pair alone for an email queued before the previous pair was recorded', () => {
    const legacy = renderEmail({ ...mail, change: null, customerReference: null }, settings);
    expect(legacy.subject).toBe('Sales order 1000473: partially delivered');
    expect(legacy.text).toBe(
      'Sales order 1000473\n\nStatus: Partially delivered\nRequested delivery date: 15 Dec 2026\n' +
        'Customer reference: -\nSold-to party: 17100001\n',
    );
  });
});

describe('customer reference in the subject', () => {
  it('keeps the first word, which carries the customer order number', () => {
    expect(subjectReference('CITYCAB-7731 8 electric taxis')).toBe('CITYCAB-7731');
  });

  it('cuts a long word to 20 characters without splitting one', () => {
    expect(subjectReference('ABCDEFGHIJKLMNOPQRSTUVWXYZ')).toBe('ABCDEFGHIJKLMNOPQRS…');
    const flags = '🇩🇪'.repeat(25);
    expect(subjectReference(flags)).toBe(`${'🇩🇪'.repeat(19)}…`);
  });

  it('turns line breaks and control characters into word breaks, and nothing into nothing', () => {
    expect(subjectReference('\r\nPO-1\r\nBcc: x@example.com')).toBe('PO-1');
    expect(subjectReference('\u0000\u202e')).toBe('');
    expect(subjectReference(null)).toBe('');
  });
});
