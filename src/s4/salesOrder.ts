// The sales order header as the service uses it, mapped from the OData V2 entity A_SalesOrder.
// Pure: the HTTP call lives in salesOrderApi.ts.

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

export class UnexpectedResponseError extends Error {
  override name = 'UnexpectedResponseError';
}

// OData V2 JSON dates: "/Date(1747008000000)/" or "/Date(1747050000000+0000)/". The number is UTC
// milliseconds; the optional offset (minutes) only says where it was recorded, so it is ignored.
const ODATA_DATE = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/;

export function parseODataDate(value: unknown): Date | null {
  if (value === null || value === undefined || value === '') return null;
  const match = typeof value === 'string' ? ODATA_DATE.exec(value) : null;
  if (match === null) throw new UnexpectedResponseError(`not an OData V2 date: ${JSON.stringify(value)}`);
  return new Date(Number(match[1]));
}

export function toSalesOrder(body: unknown, expectedKey: string): SalesOrder {
  const entity = (body as { d?: Record<string, unknown> } | null)?.d;
  if (typeof entity !== 'object' || entity === null) {
    throw new UnexpectedResponseError('response has no "d" object: not an OData V2 entity');
  }
  if (entity.SalesOrder !== expectedKey) {
    throw new UnexpectedResponseError(`response is for sales order ${JSON.stringify(entity.SalesOrder)}`);
  }
  const text = (name: string): string => {
    const value = entity[name];
    return typeof value === 'string' ? value.trim() : '';
  };
  const optional = (name: string): string | null => text(name) || null;
  const requested = parseODataDate(entity.RequestedDeliveryDate);
  return {
    salesOrder: expectedKey,
    soldToParty: optional('SoldToParty'),
    customerReference: optional('PurchaseOrderByCustomer'),
    requestedDeliveryDate: requested === null ? null : requested.toISOString().slice(0, 10),
    changedAt: parseODataDate(entity.LastChangeDateTime),
    overallSDProcessStatus: text('OverallSDProcessStatus'),
    deliveryStatus:
      'OverallDeliveryStatus' in entity ? text('OverallDeliveryStatus') : text('OverallTotalDeliveryStatus'),
    rejectionStatus: text('OverallSDDocumentRejectionSts'),
    deliveryBlockReason: text('DeliveryBlockReason'),
  };
}
