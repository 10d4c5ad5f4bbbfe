// Every text of the notification email, per language, in one place. A message is a template whose
// `{placeholders}` are filled by messages.ts; test/unit/catalogs.test.ts checks that every catalog has every
// key with the same placeholders. Status names come in two forms: as a value ("Delivered") and inside the
// subject after a colon ("delivered"), where German keeps its nouns capitalised.
import type { Language } from '../../notifications/languages.js';
import type { PortalStatus } from './state.js';

type StatusKeys<Prefix extends string> = `${Prefix}.${PortalStatus}`;

export type MessageKey =
  | 'subject'
  | 'subject.new'
  | 'subject.dateMoved'
  | 'subject.dateSet'
  | 'subject.dateRemoved'
  | 'subject.join'
  | 'title'
  | 'newOrder'
  | 'dateMoved'
  | 'dateSet'
  | 'dateRemoved'
  | 'statusChanged'
  | 'days.one'
  | 'days.other'
  | 'field.status'
  | 'field.date'
  | 'field.customerReference'
  | 'field.soldToParty'
  | 'notSet'
  | 'link'
  | StatusKeys<'status'>
  | StatusKeys<'subjectStatus'>;

export type Catalog = Readonly<Record<MessageKey, string>>;

const en: Catalog = {
  subject: 'Sales order {salesOrder}{reference}: {summary}',
  'subject.new': 'new order, {status}',
  'subject.dateMoved': 'delivery date moved to {date}',
  'subject.dateSet': 'delivery date set to {date}',
  'subject.dateRemoved': 'delivery date removed',
  'subject.join': '{first}; {second}',
  title: 'Sales order {salesOrder}',
  newOrder: 'New order',
  dateMoved: 'Requested delivery date moved from {from} to {to} ({days})',
  dateSet: 'Requested delivery date set to {date}',
  dateRemoved: 'Requested delivery date removed (was {date})',
  statusChanged: 'Status: {from} → {to}',
  'days.one': '{n} day',
  'days.other': '{n} days',
  'field.status': 'Status',
  'field.date': 'Requested delivery date',
  'field.customerReference': 'Customer reference',
  'field.soldToParty': 'Sold-to party',
  notSet: 'not set',
  link: 'Open the order in the fleet portal',
  'status.Open': 'Open',
  'status.InProcess': 'In process',
  'status.DeliveryBlocked': 'Delivery blocked',
  'status.PartiallyDelivered': 'Partially delivered',
  'status.Delivered': 'Delivered',
  'status.Rejected': 'Rejected',
  'subjectStatus.Open': 'open',
  'subjectStatus.InProcess': 'in process',
  'subjectStatus.DeliveryBlocked': 'delivery blocked',
  'subjectStatus.PartiallyDelivered': 'partially delivered',
  'subjectStatus.Delivered': 'delivered',
  'subjectStatus.Rejected': 'rejected',
};

const de: Catalog = {
  subject: 'Kundenauftrag {salesOrder}{reference}: {summary}',
  'subject.new': 'neuer Auftrag, {status}',
  'subject.dateMoved': 'Wunschlieferdatum verschoben auf {date}',
  'subject.dateSet': 'Wunschlieferdatum gesetzt auf {date}',
  'subject.dateRemoved': 'Wunschlieferdatum entfernt',
  'subject.join': '{first}; {second}',
  title: 'Kundenauftrag {salesOrder}',
  newOrder: 'Neuer Auftrag',
  dateMoved: 'Wunschlieferdatum verschoben von {from} auf {to} ({days})',
  dateSet: 'Wunschlieferdatum gesetzt auf {date}',
  dateRemoved: 'Wunschlieferdatum entfernt (war {date})',
  statusChanged: 'Status: {from} → {to}',
  'days.one': '{n} Tag',
  'days.other': '{n} Tage',
  'field.status': 'Status',
  'field.date': 'Wunschlieferdatum',
  'field.customerReference': 'Bestellnummer des Kunden',
  'field.soldToParty': 'Auftraggeber',
  notSet: 'nicht gesetzt',
  link: 'Auftrag im Flottenportal öffnen',
  'status.Open': 'Offen',
  'status.InProcess': 'In Bearbeitung',
  'status.DeliveryBlocked': 'Liefersperre',
  'status.PartiallyDelivered': 'Teilweise geliefert',
  'status.Delivered': 'Geliefert',
  'status.Rejected': 'Abgelehnt',
  'subjectStatus.Open': 'offen',
  'subjectStatus.InProcess': 'in Bearbeitung',
  'subjectStatus.DeliveryBlocked': 'Liefersperre',
  'subjectStatus.PartiallyDelivered': 'teilweise geliefert',
  'subjectStatus.Delivered': 'geliefert',
  'subjectStatus.Rejected': 'abgelehnt',
};

/**
 * Catalogs by language subtag, each with the locale its dates are formatted in when a tag names the language
 * alone: plain `en` writes "15 Dec 2026" (day first, as outside the US), `en-US` still gets "Dec 15, 2026".
 */
export const CATALOGS: Readonly<Record<Language, { messages: Catalog; dateLocale: string }>> = {
  en: { messages: en, dateLocale: 'en-GB' },
  de: { messages: de, dateLocale: 'de-DE' },
};
