import { contentOf } from '../../db/content.js';
import type { RenderedEmail } from '../../notifications/mailKind.js';
import type { ClaimedMail } from '../../notifications/mailOutbox.js';
import { escapeHtml, oneLine } from '../../notifications/mailText.js';
import { type Messages, messagesFor } from './messages.js';

/** An order's email: its outbox row, with what the effect wrote as its content. */
export interface OrderMail
  extends Pick<ClaimedMail, 'recipients' | 'messageId' | 'change' | 'locale' | 'inReplyTo'> {
  salesOrder: string;
  portalStatus: string;
  requestedDeliveryDate: string | null;
  soldToParty: string | null;
  customerReference: string | null;
  /** The pair notified before; null on the order's first email and on emails queued before it was kept. */
  previousPortalStatus: string | null;
  previousRequestedDeliveryDate: string | null;
}

/** The order's email a claimed row holds, its content checked field by field (effect.ts writes it). */
export function orderMailOf(mail: ClaimedMail): OrderMail {
  const content = contentOf(`email ${mail.id} of order ${mail.key}`, mail.content);
  return {
    salesOrder: mail.key,
    portalStatus: content.text('portalStatus'),
    requestedDeliveryDate: content.optionalDate('requestedDeliveryDate'),
    soldToParty: content.optionalText('soldToParty'),
    customerReference: content.optionalText('customerReference'),
    previousPortalStatus: content.optionalText('previousPortalStatus'),
    previousRequestedDeliveryDate: content.optionalDate('previousRequestedDeliveryDate'),
    recipients: mail.recipients,
    messageId: mail.messageId,
    change: mail.change,
    locale: mail.locale,
    inReplyTo: mail.inReplyTo,
  };
}

export interface EmailSettings {
  from: string;
  /** MAIL_LOCALE: for emails queued without a locale, and rows whose locale has no catalog. */
  locale: string;
  /** PORTAL_ORDER_URL: a URL template with `{salesOrder}`; without it the email has no link. */
  portalOrderUrl?: string | undefined;
}

/** Longest customer reference in a subject, in characters as a reader counts them. */
const SUBJECT_REFERENCE_LENGTH = 20;
const DAY_MS = 86_400_000;
// Stateless, and costly to build: one for every subject.
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * The email for one notification, from the outbox row alone: what it says about the change was recorded with
 * the row, so a resend after a crash is the same email. Header values are the order key, our own status names,
 * dates we formatted and, in the subject only, the customer reference made one short line. Other S/4HANA free
 * text goes into the body only, on one line per field and escaped for HTML.
 */
export function renderEmail(mail: OrderMail, settings: EmailSettings): RenderedEmail {
  const m = messagesFor(mail.locale ?? settings.locale, settings.locale);
  const reference = subjectReference(mail.customerReference);
  const summary = subjectSummary(mail, m);
  const changes = changeLines(mail, m);
  const date = mail.requestedDeliveryDate;
  const fields = [
    `${m.t('field.status')}: ${m.status(mail.portalStatus, 'status')}`,
    `${m.t('field.date')}: ${date === null ? m.t('notSet') : m.date(date)}`,
    `${m.t('field.customerReference')}: ${oneLine(mail.customerReference) || '-'}`,
    `${m.t('field.soldToParty')}: ${oneLine(mail.soldToParty) || '-'}`,
  ];
  const link = settings.portalOrderUrl?.replaceAll('{salesOrder}', encodeURIComponent(mail.salesOrder));
  const title = m.t('title', { salesOrder: mail.salesOrder });
  const paragraphs = [[title], changes, fields].filter((lines) => lines.length > 0);
  const text = paragraphs.map((lines) => lines.join('\n'));
  const html = paragraphs.map((lines) => `<p>${lines.map(escapeHtml).join('<br>\n')}</p>`);
  if (link !== undefined) {
    text.push(`${m.t('link')}: ${link}`);
    html.push(`<p><a href="${escapeHtml(link)}">${escapeHtml(m.t('link'))}</a></p>`);
  }
  return {
    from: settings.from,
    to: mail.recipients,
    subject: m.t('subject', {
      salesOrder: mail.salesOrder,
      reference: reference === '' ? '' : ` (${reference})`,
      summary,
    }),
    messageId: mail.messageId,
    // Every email of an order answers its first one, so mail clients show one conversation per order.
    ...(mail.inReplyTo === null ? {} : { inReplyTo: mail.inReplyTo, references: [mail.inReplyTo] }),
    headers: {
      'X-Sales-Order': mail.salesOrder,
      'X-Portal-Status': mail.portalStatus,
      // An order without a date gets no such header: nodemailer never writes a header with an empty value,
      // so "absent" is how a reader tells "no date".
      ...(date === null ? {} : { 'X-Requested-Delivery-Date': date }),
    },
    text: `${text.join('\n\n')}\n`,
    html: `${html.join('\n')}\n`,
  };
}

/** What changed against the previous notification, one line each: date first, then status. */
function changeLines(mail: OrderMail, m: Messages): string[] {
  if (mail.change === 'new') return [m.t('newOrder')];
  if (mail.change === null) return []; // queued before the previous pair was recorded: the state alone
  const lines: string[] = [];
  const from = mail.previousRequestedDeliveryDate;
  const to = mail.requestedDeliveryDate;
  if (from !== null && to !== null && from !== to) {
    lines.push(m.t('dateMoved', { from: m.date(from), to: m.date(to), days: m.days(daysBetween(from, to)) }));
  } else if (from === null && to !== null) {
    lines.push(m.t('dateSet', { date: m.date(to) }));
  } else if (from !== null && to === null) {
    lines.push(m.t('dateRemoved', { date: m.date(from) }));
  }
  if (mail.previousPortalStatus !== mail.portalStatus) {
    const previous = m.status(mail.previousPortalStatus ?? '', 'status');
    lines.push(m.t('statusChanged', { from: previous, to: m.status(mail.portalStatus, 'status') }));
  }
  return lines;
}

/** The subject after the order: the new status when it changed, and where the date went when that changed. */
function subjectSummary(mail: OrderMail, m: Messages): string {
  const status = m.status(mail.portalStatus, 'subjectStatus');
  if (mail.change === 'new') return m.t('subject.new', { status });
  if (mail.change === null) return status;
  const parts: string[] = [];
  if (mail.previousPortalStatus !== mail.portalStatus) parts.push(status);
  const from = mail.previousRequestedDeliveryDate;
  const to = mail.requestedDeliveryDate;
  if (from !== to) {
    if (to === null) parts.push(m.t('subject.dateRemoved'));
    else parts.push(m.t(from === null ? 'subject.dateSet' : 'subject.dateMoved', { date: m.date(to) }));
  }
  const [first, second] = parts;
  if (first === undefined) return status;
  return second === undefined ? first : m.t('subject.join', { first, second });
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/**
 * The customer reference as it may stand in a subject: its first word (references lead with the customer's
 * order number, e.g. "CITYCAB-7731 8 electric taxis"), control characters gone, at most 20 characters.
 */
export function subjectReference(reference: string | null): string {
  const [word = ''] = oneLine(reference).split(' ');
  const characters = [...GRAPHEMES.segment(word)];
  if (characters.length <= SUBJECT_REFERENCE_LENGTH) return word;
  return `${characters
    .slice(0, SUBJECT_REFERENCE_LENGTH - 1)
    .map((part) => part.segment)
    .join('')}…`;
}
