// Every text of the warranty-case email, per language, in the languages the order email has
// (test/unit/customerReturnEmail.test.ts checks both, key for key and placeholder for placeholder). Status names
// come as a value ("Completed") and inside the subject after a colon ("completed"), as in the order email.
import type { Language } from '../../notifications/languages.js';
import type { CaseStatus } from './state.js';

export type CaseMessageKey =
  | 'subject'
  | 'subject.salesOrder'
  | 'subject.new'
  | 'title'
  | 'newCase'
  | 'statusChanged'
  | 'field.status'
  | 'field.salesOrder'
  | 'field.customerReference'
  | 'field.soldToParty'
  | 'field.returnReasons'
  | `status.${CaseStatus}`
  | `subjectStatus.${CaseStatus}`;

export type CaseCatalog = Readonly<Record<CaseMessageKey, string>>;

const en: CaseCatalog = {
  subject: 'Customer return {customerReturn}{salesOrder}: {summary}',
  'subject.salesOrder': ' for sales order {salesOrder}',
  'subject.new': 'new warranty case, {status}',
  title: 'Warranty case: customer return {customerReturn}',
  newCase: 'New warranty case',
  statusChanged: 'Status: {from} → {to}',
  'field.status': 'Status',
  'field.salesOrder': 'Sales order',
  'field.customerReference': 'Customer reference',
  'field.soldToParty': 'Sold-to party',
  'field.returnReasons': 'Return reasons',
  'status.Open': 'Open',
  'status.InProcess': 'In process',
  'status.Completed': 'Completed',
  'status.Rejected': 'Rejected',
  'status.Withdrawn': 'Withdrawn',
  'subjectStatus.Open': 'open',
  'subjectStatus.InProcess': 'in process',
  'subjectStatus.Completed': 'completed',
  'subjectStatus.Rejected': 'rejected',
  'subjectStatus.Withdrawn': 'withdrawn',
};

const de: CaseCatalog = {
  subject: 'Kundenretoure {customerReturn}{salesOrder}: {summary}',
  'subject.salesOrder': ' zu Kundenauftrag {salesOrder}',
  'subject.new': 'neuer Garantiefall, {status}',
  title: 'Garantiefall: Kundenretoure {customerReturn}',
  newCase: 'Neuer Garantiefall',
  statusChanged: 'Status: {from} → {to}',
  'field.status': 'Status',
  'field.salesOrder': 'Kundenauftrag',
  'field.customerReference': 'Bestellnummer des Kunden',
  'field.soldToParty': 'Auftraggeber',
  'field.returnReasons': 'Retourengründe',
  'status.Open': 'Offen',
  'status.InProcess': 'In Bearbeitung',
  'status.Completed': 'Abgeschlossen',
  'status.Rejected': 'Abgelehnt',
  'status.Withdrawn': 'Zurückgezogen',
  'subjectStatus.Open': 'offen',
  'subjectStatus.InProcess': 'in Bearbeitung',
  'subjectStatus.Completed': 'abgeschlossen',
  'subjectStatus.Rejected': 'abgelehnt',
  'subjectStatus.Withdrawn': 'zurückgezogen',
};

/** Catalogs by language subtag. */
export const CASE_CATALOGS: Readonly<Record<Language, CaseCatalog>> = { en, de };
