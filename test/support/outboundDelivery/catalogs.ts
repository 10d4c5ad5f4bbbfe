// Every text of the delivery email, in every language of src/notifications/languages.ts.
import type { Language } from '../../../src/notifications/languages.js';
import type { DeliveryStatus } from './state.js';

export type DeliveryMessageKey = 'subject' | 'new' | 'changed' | `status.${DeliveryStatus}`;

export const DELIVERY_CATALOGS: Readonly<Record<Language, Readonly<Record<DeliveryMessageKey, string>>>> = {
  en: {
    subject: 'Outbound delivery {delivery}: {status}',
    new: 'New delivery, {status}',
    changed: 'Status: {from} → {to}',
    'status.Planned': 'planned',
    'status.Shipping': 'shipping',
    'status.Shipped': 'shipped',
  },
  de: {
    subject: 'Auslieferung {delivery}: {status}',
    new: 'Neue Auslieferung, {status}',
    changed: 'Status: {from} → {to}',
    'status.Planned': 'geplant',
    'status.Shipping': 'im Versand',
    'status.Shipped': 'versandt',
  },
};
