/**
 * The CloudEvents S/4HANA raises for sales orders, as a stand-in producer would publish them: the envelope of
 * the real samples (`specversion`, `type`, `source` = `/default/sap.s4.beh/<tenant>`, `id`, `time`,
 * `datacontenttype`, `data` with the order's key fields). The tests, the crash suite, the benchmark and the demo
 * build their events here, so a change of shape is made once and reaches every producer.
 */
import { randomUUID } from 'node:crypto';

/** The source of an S/4HANA Cloud tenant (the tenant of the codejam sample). */
export const S4_SOURCE = '/default/sap.s4.beh/244572008';
export const SALES_ORDER_TYPE = 'sap.s4.beh.salesorder.v1.SalesOrder.';
export const OTHER_TYPE = 'sap.s4.beh.businesspartner.v1.BusinessPartner.Changed.v1';

export interface S4EventSpec {
  /** Default: a fresh UUID. */
  id?: string;
  source?: string;
  /** A full type, or a sales-order variant such as `Changed.v1`. Default `Changed.v1`. */
  type?: string;
  /** The event's `time` (and the data's `EventRaisedDateTime`). Default 2026-03-03T13:19:54Z. */
  time?: string;
  /** Put into `data.SalesOrder` as given, so tests can send invalid keys. Default 1000473. */
  salesOrder?: unknown;
  /** Replaces the whole `data` (for events of other types, or hostile payloads). */
  data?: unknown;
  /** Fields added to (or overriding) the envelope, e.g. a wrong `specversion`. */
  envelope?: Record<string, unknown>;
}

/** The event as an object, in the order S/4HANA writes its attributes. */
export function s4Event(spec: S4EventSpec = {}): Record<string, unknown> {
  const time = spec.time ?? '2026-03-03T13:19:54Z';
  const type = spec.type ?? 'Changed.v1';
  return {
    specversion: '1.0',
    type: type.startsWith('sap.') ? type : `${SALES_ORDER_TYPE}${type}`,
    source: spec.source ?? S4_SOURCE,
    id: spec.id ?? randomUUID(),
    time,
    datacontenttype: 'application/json',
    data: spec.data ?? salesOrderData(spec.salesOrder ?? '1000473', time),
    ...spec.envelope,
  };
}

export const CUSTOMER_RETURN_TYPE = 'sap.s4.beh.customerreturn.v1.CustomerReturn.';

/** A customer-return event as S/4HANA writes it: `change` such as `Created` or `ItemChanged`. */
export function customerReturnEvent(customerReturn: string, change: string, spec: S4EventSpec = {}): string {
  return salesOrderEvent({
    ...spec,
    type: `${CUSTOMER_RETURN_TYPE}${change}.v1`,
    data: { CustomerReturn: customerReturn, EventRaisedDateTime: spec.time ?? '2026-03-03T13:19:54Z' },
  });
}

/** A structured-mode event body (JSON text). */
export function salesOrderEvent(spec: S4EventSpec = {}): string {
  return JSON.stringify(s4Event(spec));
}

/**
 * The event in binary mode: its attributes as strings under `prefix` (`cloudEvents:` for AMQP application
 * properties, `ce-` for HTTP headers, none for a transport's parsed attributes) and its data as the JSON body.
 * `datacontenttype` becomes the transport's content type, so it is left out.
 */
export function binaryEvent(
  spec: S4EventSpec = {},
  prefix = '',
): { attributes: Record<string, string>; body: string } {
  const { data, datacontenttype: _, ...attributes } = s4Event(spec);
  return {
    attributes: Object.fromEntries(
      Object.entries(attributes).map(([name, value]) => [prefix + name, String(value)]),
    ),
    body: JSON.stringify(data),
  };
}

/** The key fields S/4HANA puts in a sales-order event's data. */
export function salesOrderData(salesOrder: unknown, raisedAt: string): Record<string, unknown> {
  return {
    SalesOrder: salesOrder,
    SalesOrderType: 'OR',
    SalesOrganization: '1710',
    DistributionChannel: '10',
    OrganizationDivision: '00',
    SoldToParty: '17100001',
    EventRaisedDateTime: raisedAt,
  };
}
