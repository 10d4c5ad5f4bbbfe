import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { PermanentError } from '../../src/errors.js';
import type { RenderedEmail } from '../../src/notifications/mailKind.js';
import { composeEmail } from '../../src/notifications/mime.js';

const email: RenderedEmail = {
  from: 'Fleet notifier <notifier@fleet.example>',
  to: ['fleet@customer.example', 'dispatch@customer.example'],
  subject:
    'Kundenauftrag 6000008 (PO-4711): geliefert; Wunschlieferdatum verschoben auf 12. Jan. 2027 — über',
  messageId: '<n-7@fleet.example>',
  inReplyTo: '<n-1@fleet.example>',
  references: ['<n-1@fleet.example>'],
  headers: { 'X-Sales-Order': '6000008', 'X-Portal-Status': 'Delivered' },
  text: 'Kundenauftrag 6000008\n\nStatus: Teilweise geliefert → Geliefert\n',
  html: '<p>Kundenauftrag 6000008<br>\nStatus: Teilweise geliefert → Geliefert</p>\n',
};

const date = new Date('2026-12-07T08:15:00Z');

/** The same email as nodemailer's own composer writes it. */
async function byNodemailer(mail: RenderedEmail): Promise<string> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const { message } = await transport.sendMail({ ...mail, date });
  return (message as Buffer).toString('utf8');
}

const HEADERS = ['from', 'to', 'subject', 'message-id', 'in-reply-to', 'references', 'date', 'mime-version'];

describe('an email composed whole', () => {
  it('reads back as the rendered email: headers, text and HTML', async () => {
    const { raw, envelope } = composeEmail(email, date);
    const parsed = await simpleParser(raw);
    expect(envelope).toEqual({ from: 'notifier@fleet.example', to: email.to });
    expect(parsed.subject).toBe(email.subject);
    expect(parsed.messageId).toBe(email.messageId);
    expect(parsed.inReplyTo).toBe(email.inReplyTo);
    expect(parsed.references).toBe('<n-1@fleet.example>');
    expect(parsed.headers.get('x-sales-order')).toBe('6000008');
    expect(parsed.headers.get('x-portal-status')).toBe('Delivered');
    expect(parsed.date?.toISOString()).toBe(date.toISOString());
    expect(parsed.text).toBe(email.text);
    expect(parsed.html).toBe(email.html);
  });

  it("carries every header exactly as nodemailer's composer writes it", async () => {
    const ours = await simpleParser(composeEmail(email, date).raw);
    const theirs = await simpleParser(await byNodemailer(email));
    for (const key of [...HEADERS, 'x-sales-order', 'x-portal-status']) {
      expect([key, ours.headers.get(key)]).toEqual([key, theirs.headers.get(key)]);
    }
    expect(ours.headerLines.map((line) => line.key)).toEqual(theirs.headerLines.map((line) => line.key));
  });

  it('goes out as 7-bit lines of at most 78 characters, each ending in CRLF', () => {
    const long = `${'Wunschlieferdatum verschoben, Ölwechsel fällig. '.repeat(12)}\n`;
    const { raw } = composeEmail({ ...email, text: long, html: `<p>${long}</p>` }, date);
    expect(raw).toMatch(/^[\x20-\x7e\r\n]*$/);
    expect(raw.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
    for (const line of raw.split('\r\n')) expect(line.length).toBeLessThanOrEqual(78);
  });

  it('keeps hostile free text inside its part and its header', async () => {
    const hostile = 'PO\r\nBcc: intruder@example.com\r\n--=_fleet-order-notifier-alternative--\r\n.\r\nQUIT';
    const { raw, envelope } = composeEmail(
      { ...email, headers: { 'X-Sales-Order': hostile }, text: `${hostile}\n`, html: `<p>${hostile}</p>\n` },
      date,
    );
    const parsed = await simpleParser(raw);
    expect(envelope.to).toEqual(email.to);
    expect(parsed.headers.has('bcc')).toBe(false);
    expect(parsed.headers.get('x-sales-order')).toBe(hostile.replaceAll('\r\n', ' '));
    expect(parsed.text).toBe(`${hostile.replaceAll('\r\n', '\n')}\n`);
    expect(parsed.html).toBe(`<p>${hostile.replaceAll('\r\n', '\n')}</p>\n`);
  });

  it('writes an internationalized domain as punycode, in the envelope and the To header', async () => {
    const { raw, envelope } = composeEmail({ ...email, to: ['flotte@müller.example'] }, date);
    expect(envelope.to).toEqual(['flotte@xn--mller-kva.example']);
    expect(raw).toContain('To: flotte@xn--mller-kva.example\r\n');
  });

  it('gives each address list its own envelope and header, the same every time it is asked again', () => {
    const first = composeEmail(email, date);
    // What a caller does with one email's envelope does not reach the next email's.
    first.envelope.to.push('intruder@elsewhere.example');
    const again = composeEmail(email, date);
    expect(again.envelope.to).toEqual(email.to);
    expect(again.raw).toBe(composeEmail(email, date).raw);
    // Another list, or another sender, is its own key.
    const other = composeEmail({ ...email, to: ['fleet@customer.example'] }, date);
    expect(other.envelope.to).toEqual(['fleet@customer.example']);
    expect(other.raw).toContain('To: fleet@customer.example\r\n');
    const sender = composeEmail({ ...email, from: 'Other <other@fleet.example>' }, date);
    expect(sender.envelope.from).toBe('other@fleet.example');
    expect(sender.raw).toContain('From: Other <other@fleet.example>\r\n');
  });

  it('refuses an email without a recipient address for good', () => {
    expect(() => composeEmail({ ...email, to: [] }, date)).toThrow(PermanentError);
    expect(() => composeEmail({ ...email, to: [''] }, date)).toThrow(/recipient/);
  });
});
