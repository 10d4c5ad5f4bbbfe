// The plain consumer's S/4HANA read: one GET of the sales order header from the released OData V2 API
// (API_SALES_ORDER_SRV), mapped to what the portal shows, written for this consumer alone.

export interface Order {
  salesOrder: string;
  portalStatus: string;
  /** YYYY-MM-DD, or null when S/4HANA has none. */
  requestedDeliveryDate: string | null;
  soldToParty: string | null;
  customerReference: string | null;
  /** LastChangeDateTime: a late read never overwrites a newer state. */
  changedAt: Date | null;
}

const SERVICE_PATH = '/sap/opu/odata/sap/API_SALES_ORDER_SRV';

/** V2 writes Edm.DateTime as `/Date(ms)/` and Edm.DateTimeOffset as `/Date(ms+0000)/`, milliseconds in UTC. */
function odataDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  const match = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/.exec(String(value));
  if (match === null) throw new Error(`not an OData V2 date: ${JSON.stringify(value)}`);
  return new Date(Number(match[1]));
}

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');
const optional = (value: unknown) => text(value) || null;

/** The portal's status: the first rule that matches (A = not yet, B = partly, C = fully). */
function portalStatus(entity: Record<string, unknown>): string {
  const delivery = text(entity.OverallDeliveryStatus ?? entity.OverallTotalDeliveryStatus);
  if (text(entity.OverallSDDocumentRejectionSts) === 'C') return 'Rejected';
  if (delivery === 'C') return 'Delivered';
  if (delivery === 'B') return 'PartiallyDelivered';
  if (text(entity.DeliveryBlockReason) !== '') return 'DeliveryBlocked';
  if (text(entity.OverallSDProcessStatus) === 'B') return 'InProcess';
  return 'Open';
}

export async function readOrder(s4Url: string, salesOrder: string): Promise<Order> {
  const key = encodeURIComponent(`'${salesOrder.replaceAll("'", "''")}'`);
  const url = new URL(`${SERVICE_PATH}/A_SalesOrder(${key})?$format=json`, s4Url);
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`S/4HANA answered ${response.status} for ${salesOrder}`);
  const entity = ((await response.json()) as { d?: Record<string, unknown> }).d;
  if (entity?.SalesOrder !== salesOrder) throw new Error(`S/4HANA answered another order for ${salesOrder}`);
  return {
    salesOrder,
    portalStatus: portalStatus(entity),
    requestedDeliveryDate: odataDate(entity.RequestedDeliveryDate)?.toISOString().slice(0, 10) ?? null,
    soldToParty: optional(entity.SoldToParty),
    customerReference: optional(entity.PurchaseOrderByCustomer),
    changedAt: odataDate(entity.LastChangeDateTime),
  };
}
