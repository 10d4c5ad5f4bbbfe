// The email for one change of a warranty case's status, from what its outbox row records, in the fleet
// manager's language. Pure. Header values are the return and sales order keys and our own status names; S/4HANA
// free text (customer reference, sold-to party) goes into the body only, on one line and escaped for HTML.
import { contentOf } from '../../db/content.js';
import { fillMessage, statusText } from '../../notifications/catalogText.js';
import { catalogLanguage } from '../../notifications/languages.js';
import type { RenderedEmail } from '../../notifications/mailKind.js';
import type { ClaimedMail } from '../../notifications/mailOutbox.js';
import { escapeHtml, oneLine } from '../../notifications/mailText.js';
import { CASE_CATALOGS, type CaseMessageKey } from './catalogs.js';

export interface CaseMail {
  customerReturn: string;
  salesOrder: string | null;
  caseStatus: string;
  /** The status the manager was last told of; null: the case's first email. */
  previousCaseStatus: string | null;
  soldToParty: string | null;
  customerReference: string | null;
  returnReasons: readonly string[];
  recipients: string[];
  messageId: string;
  /** The Message-ID of the case's first email; null for that first email. */
  inReplyTo: string | null;
  /** The recipients' language (BCP 47), fixed when queued; null: the service's MAIL_LOCALE. */
  locale: string | null;
}

/** The case's email a claimed row holds, its content checked field by field (effect.ts writes it). */
export function caseMailOf(mail: ClaimedMail): CaseMail {
  const content = contentOf(`email ${mail.id} of customer return ${mail.key}`, mail.content);
  return {
    customerReturn: mail.key,
    salesOrder: content.optionalText('salesOrder'),
    caseStatus: content.text('caseStatus'),
    previousCaseStatus: content.optionalText('previousCaseStatus'),
    soldToParty: content.optionalText('soldToParty'),
    customerReference: content.optionalText('customerReference'),
    returnReasons: content.texts('returnReasons'),
    recipients: mail.recipients,
    messageId: mail.messageId,
    inReplyTo: mail.inReplyTo,
    locale: mail.locale,
  };
}

export interface CaseEmailSettings {
  from: string;
  /** MAIL_LOCALE, which must have a catalog (config checks). */
  locale: string;
}

export function renderCaseEmail(mail: CaseMail, settings: CaseEmailSettings): RenderedEmail {
  const language =
    catalogLanguage(mail.locale ?? settings.locale) ?? catalogLanguage(settings.locale) ?? 'en';
  const catalog = CASE_CATALOGS[language];
  const t = (key: CaseMessageKey, values?: Record<string, string>) => fillMessage(catalog[key], values);
  const status = (value: string | null, form: 'status' | 'subjectStatus') =>
    statusText(catalog, value ?? '', form);

  const first = mail.previousCaseStatus === null;
  const subjectStatus = status(mail.caseStatus, 'subjectStatus');
  const change = first
    ? t('newCase')
    : t('statusChanged', {
        from: status(mail.previousCaseStatus, 'status'),
        to: status(mail.caseStatus, 'status'),
      });
  const fields = [
    `${t('field.status')}: ${status(mail.caseStatus, 'status')}`,
    `${t('field.salesOrder')}: ${mail.salesOrder ?? '-'}`,
    `${t('field.customerReference')}: ${oneLine(mail.customerReference) || '-'}`,
    `${t('field.soldToParty')}: ${oneLine(mail.soldToParty) || '-'}`,
    `${t('field.returnReasons')}: ${mail.returnReasons.map(oneLine).join(', ') || '-'}`,
  ];
  const paragraphs = [[t('title', { customerReturn: mail.customerReturn })], [change], fields];
  return {
    from: settings.from,
    to: mail.recipients,
    subject: t('subject', {
      customerReturn: mail.customerReturn,
      salesOrder: mail.salesOrder === null ? '' : t('subject.salesOrder', { salesOrder: mail.salesOrder }),
      summary: first ? t('subject.new', { status: subjectStatus }) : subjectStatus,
    }),
    messageId: mail.messageId,
    // Every email of a case answers its first one: one conversation per case.
    ...(mail.inReplyTo === null ? {} : { inReplyTo: mail.inReplyTo, references: [mail.inReplyTo] }),
    headers: {
      'X-Customer-Return': mail.customerReturn,
      'X-Case-Status': mail.caseStatus,
      ...(mail.salesOrder === null ? {} : { 'X-Sales-Order': mail.salesOrder }),
    },
    text: `${paragraphs.map((lines) => lines.join('\n')).join('\n\n')}\n`,
    html: `${paragraphs.map((lines) => `<p>${lines.map(escapeHtml).join('<br>\n')}</p>`).join('\n')}\n`,
  };
}
