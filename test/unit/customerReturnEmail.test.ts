// The warranty-case email texts and the portal's warranty-case body, on their own.
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { CASE_CATALOGS } from '../../src/families/customerReturn/catalogs.js';
import { type CaseMail, renderCaseEmail } from '../../src/families/customerReturn/email.js';
import { warrantyCaseBody, warrantyCasePath } from '../../src/families/customerReturn/pushResource.js';
import { CASE_STATUSES } from '../../src/families/customerReturn/state.js';
import { LANGUAGES } from '../../src/notifications/languages.js';
import { composeEmail } from '../../src/notifications/mime.js';

const mail: CaseMail = {
  customerReturn: '60000123',
  salesOrder: '1000473',
  caseStatus: 'Open',
  previousCaseStatus: null,
  soldToParty: '17100002',
  customerReference: '<b>RMA</b> & "Co"\r\nBcc: intruder@example.com',
  returnReasons: ['003', '103'],
  recipients: ['fleet@example.com'],
  messageId: '<c-9@fleet.example>',
  inReplyTo: null,
  locale: 'en',
};
const settings = { from: 'notifier@fleet.example', locale: 'en' };

/** The message exactly as it goes over SMTP. */
async function compose(options: CaseMail): Promise<string> {
  return composeEmail(renderCaseEmail(options, settings)).raw;
}

const head = (raw: string) => raw.slice(0, raw.indexOf('\r\n\r\n'));
const placeholders = (message: string) => [...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('warranty-case email', () => {
  it('names the return and the sales order it refers to in the subject, and says it is a new case', () => {
    expect(renderCaseEmail(mail, settings).subject).toBe(
      'Customer return 60000123 for sales order 1000473: new warranty case, open',
    );
    expect(renderCaseEmail({ ...mail, salesOrder: null }, settings).subject).toBe(
      'Customer return 60000123: new warranty case, open',
    );
  });

  it('says the status change in the subject and the body of a later email', () => {
    const later = renderCaseEmail(
      { ...mail, caseStatus: 'Completed', previousCaseStatus: 'InProcess' },
      settings,
    );
    expect(later.subject).toBe('Customer return 60000123 for sales order 1000473: completed');
    expect(later.text).toBe(
      [
        'Warranty case: customer return 60000123',
        '',
        'Status: In process → Completed',
        '',
        'Status: Completed',
        'Sales order: 1000473',
        'Customer reference: <b>RMA</b> & "Co" Bcc: intruder@example.com',
        'Sold-to party: 17100002',
        'Return reasons: 003, 103',
        '',
      ].join('\n'),
    );
  });

  it('carries the case headers and the fixed Message-ID, and answers the first email of the case', async () => {
    const first = head(await compose(mail));
    expect(first).toContain('X-Customer-Return: 60000123');
    expect(first).toContain('X-Case-Status: Open');
    expect(first).toContain('X-Sales-Order: 1000473');
    expect(first).toContain('Message-ID: <c-9@fleet.example>');
    expect(first).not.toMatch(/In-Reply-To|References/);
    const later = await compose({
      ...mail,
      previousCaseStatus: 'Open',
      caseStatus: 'Withdrawn',
      inReplyTo: '<c-1@fleet.example>',
      salesOrder: null,
    });
    expect(head(later)).toContain('In-Reply-To: <c-1@fleet.example>');
    expect(head(later)).toContain('References: <c-1@fleet.example>');
    expect(head(later)).not.toContain('X-Sales-Order');
  });

  it('keeps S/4HANA free text out of the headers, on one line in the body and escaped in HTML', async () => {
    const raw = await compose(mail);
    expect(head(raw)).not.toMatch(/intruder|RMA/);
    const parsed = await simpleParser(raw);
    expect(parsed.bcc).toBeUndefined();
    const { html } = renderCaseEmail(mail, settings);
    expect(html).toContain('&#60;b&#62;RMA&#60;/b&#62; &#38; &#34;Co&#34; Bcc: intruder@example.com');
    expect(html).not.toContain('<b>');
  });

  it("writes in the manager's language, falling back to MAIL_LOCALE", () => {
    const german = renderCaseEmail(
      { ...mail, locale: 'de-AT', caseStatus: 'Rejected', previousCaseStatus: 'Open' },
      settings,
    );
    expect(german.subject).toBe('Kundenretoure 60000123 zu Kundenauftrag 1000473: abgelehnt');
    expect(german.text).toContain('Status: Offen → Abgelehnt\n');
    expect(german.text).toContain('Retourengründe: 003, 103\n');
    expect(renderCaseEmail({ ...mail, locale: 'fr' }, { ...settings, locale: 'de' }).subject).toBe(
      'Kundenretoure 60000123 zu Kundenauftrag 1000473: neuer Garantiefall, offen',
    );
    expect(renderCaseEmail({ ...mail, locale: null }, settings).subject).toMatch(/^Customer return /);
  });

  it('shows an empty list of reasons and missing values as a dash', () => {
    const bare = renderCaseEmail(
      { ...mail, returnReasons: [], soldToParty: null, customerReference: null, salesOrder: null },
      settings,
    );
    expect(bare.text).toContain(
      'Sales order: -\nCustomer reference: -\nSold-to party: -\nReturn reasons: -\n',
    );
  });
});

describe('warranty-case catalogs', () => {
  const reference = CASE_CATALOGS.en as Record<string, string>;

  it("exist for exactly the order email's languages", () => {
    expect(Object.keys(CASE_CATALOGS).sort()).toEqual([...LANGUAGES].sort());
  });

  it.each(LANGUAGES)('%s has every key of en with the same placeholders, none empty', (language) => {
    const messages = CASE_CATALOGS[language] as Record<string, string>;
    expect(Object.keys(messages).sort()).toEqual(Object.keys(reference).sort());
    for (const [key, message] of Object.entries(reference)) {
      expect({ key, placeholders: placeholders(messages[key] ?? '') }).toEqual({
        key,
        placeholders: placeholders(message),
      });
      expect(messages[key]?.trim()).not.toBe('');
    }
  });

  it('names every case status in both forms', () => {
    for (const status of CASE_STATUSES) {
      expect(reference[`status.${status}`]).toBeDefined();
      expect(reference[`subjectStatus.${status}`]).toBeDefined();
    }
  });
});

describe('the warranty-case push', () => {
  it('puts the case at /warranty-cases/<customerReturn>, the key encoded', () => {
    expect(warrantyCasePath('60000123')).toBe('/warranty-cases/60000123');
    expect(warrantyCasePath('R/1')).toBe('/warranty-cases/R%2F1');
  });

  it('sends exactly the contract fields, times as ISO instants', () => {
    const body = warrantyCaseBody({
      key: '60000123',
      // As the effect writes it; a field the contract lacks is not sent.
      content: {
        s4ChangedAt: '2025-12-01T10:00:00.123Z',
        returnReasons: ['003', '103'],
        salesOrder: '1000473',
        customerReference: 'RMA 7731',
        soldToParty: '17100002',
        caseStatus: 'InProcess',
        customerReturn: '60000123',
        extra: 'x',
      },
    });
    expect(JSON.stringify(body)).toBe(
      '{"customerReturn":"60000123","caseStatus":"InProcess","soldToParty":"17100002","customerReference":"RMA 7731",' +
        '"salesOrder":"1000473","returnReasons":["003","103"],"s4ChangedAt":"2025-12-01T10:00:00.123Z"}',
    );
  });

  it('sends nulls for what the case lacks, and an empty list of reasons', () => {
    const withdrawn = {
      customerReturn: '60000124',
      caseStatus: 'Withdrawn' as const,
      soldToParty: null,
      customerReference: null,
      salesOrder: null,
      returnReasons: [],
      s4ChangedAt: null,
    };
    expect(warrantyCaseBody({ key: '60000124', content: withdrawn })).toStrictEqual(withdrawn);
  });

  it('refuses content the effect never wrote, naming the field', () => {
    expect(() => warrantyCaseBody({ key: '60000125', content: { customerReturn: '60000125' } })).toThrow(
      /portal push of customer return 60000125: caseStatus is not a text/,
    );
    expect(() => warrantyCaseBody({ key: '60000125', content: [] })).toThrow(/not a JSON object/);
  });
});
