// The sales order header as the service uses it, mapped from either API version's entity.
// Pure: the HTTP call lives in api.ts, each version's names in services.ts.
import { type TimeFormat, UnexpectedResponseError } from '../../s4/odataEntity.js';

export interface SalesOrder {
  salesOrder: string;
  soldToParty: string | null;
  customerReference: string | null;
  /** YYYY-MM-DD, or null when S/4HANA has none. */
  requestedDeliveryDate: string | null;
  /** LastChangeDateTime: orders states of one order; null if the release does not fill it. */
  changedAt: Date | null;
  overallSDProcessStatus: string;
  /** OverallDeliveryStatus, or OverallTotalDeliveryStatus where the release lacks the former. */
  deliveryStatus: string;
  rejectionStatus: string;
  deliveryBlockReason: string;
}

/** Maps one entity (already unwrapped from its envelope) to the header the portal needs. */
export function toSalesOrder(
  entity: Record<string, unknown>,
  expectedKey: string,
  time: TimeFormat,
): SalesOrder {
  if (entity.SalesOrder !== expectedKey) {
    throw new UnexpectedResponseError(`response is for sales order ${JSON.stringify(entity.SalesOrder)}`);
  }
  const text = (name: string): string => {
    const value = entity[name];
    return typeof value === 'string' ? value.trim() : '';
  };
  const optional = (name: string): string | null => text(name) || null;
  return {
    salesOrder: expectedKey,
    soldToParty: optional('SoldToParty'),
    customerReference: optional('PurchaseOrderByCustomer'),
    requestedDeliveryDate: time.date(entity.RequestedDeliveryDate),
    changedAt: time.dateTime(entity.LastChangeDateTime),
    overallSDProcessStatus: text('OverallSDProcessStatus'),
    deliveryStatus:
      'OverallDeliveryStatus' in entity ? text('OverallDeliveryStatus') : text('OverallTotalDeliveryStatus'),
    rejectionStatus: text('OverallSDDocumentRejectionSts'),
    deliveryBlockReason: text('DeliveryBlockReason'),
  };
}
