// The sales order header as the service uses it, mapped from either API version's entity.
// Pure: the HTTP call lives in salesOrderApi.ts, each version's wire format in odataV2.ts and odataV4.ts.
import { TransientError } from '../../errors.js';

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

/**
 * S/4HANA answered something that is not the sales order asked for. Transient by statement: it is a gateway,
 * proxy or release to look at, and the message waits (bounded by the delivery limit) instead of being
 * dead-lettered for a problem that is not its own.
 */
export class UnexpectedResponseError extends TransientError {
  override name = 'UnexpectedResponseError';
}

/** How one API version writes the two kinds of time the mapping reads. */
export interface TimeFormat {
  /** An Edm date as YYYY-MM-DD, or null. */
  date(value: unknown): string | null;
  /** An Edm.DateTimeOffset, or null. */
  dateTime(value: unknown): Date | null;
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

/** An object, or the reason it is not one: envelopes are checked before anything is read from them. */
export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UnexpectedResponseError(`response has no ${what}`);
  }
  return value as Record<string, unknown>;
}
