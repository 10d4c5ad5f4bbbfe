// The sales order header as each API version writes it, for the S/4HANA stand-in (s4Server.ts).
// V2 (API_SALES_ORDER_SRV, A_SalesOrderType): `__metadata`, `/Date(ms)/` for Edm.DateTime, `/Date(ms+0000)/`
// for Edm.DateTimeOffset, amounts as strings, both delivery statuses (docs/s4hana.md, V2 wire format; shape as
// in answers captured from real systems). V4 (CE_SALESORDER_0001, SalesOrder): `@odata.context` and
// `@odata.etag` beside the fields, Edm.Date "YYYY-MM-DD", Edm.DateTimeOffset with 7 fractional digits, amounts
// as JSON numbers, OverallDeliveryStatus only (docs/s4hana.md, V4 wire format).
import { timeStamp } from './s4Filter.js';

export type SandboxApi = 'v2' | 'v4';

export interface SalesOrderState {
  salesOrder: string;
  soldToParty?: string;
  customerReference?: string;
  /** YYYY-MM-DD */
  requestedDeliveryDate?: string | null;
  /** ISO instant */
  lastChangeDateTime: string;
  overallSDProcessStatus?: string;
  overallDeliveryStatus?: string;
  overallTotalDeliveryStatus?: string;
  rejectionStatus?: string;
  deliveryBlockReason?: string;
  totalNetAmount?: string;
  currency?: string;
}

export type Entity = Record<string, unknown>;

export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const SERVICE_PATHS: Record<SandboxApi, string> = {
  v2: '/sap/opu/odata/sap/API_SALES_ORDER_SRV',
  v4: '/sap/opu/odata4/sap/api_salesorder/srvd_a2x/sap/salesorder/0001',
};
export const ENTITY_SETS: Record<SandboxApi, string> = {
  v2: `${SERVICE_PATHS.v2}/A_SalesOrder`,
  v4: `${SERVICE_PATHS.v4}/SalesOrder`,
};

const DAY_MS = 86_400_000;
const keyPredicate = (salesOrder: string) => `('${encodeURIComponent(salesOrder.replaceAll("'", "''"))}')`;
/** SAP writes change times with 7 fractional digits: those of the state, zeros beyond the ones it gives. */
const stamp7 = (s: { lastChangeDateTime: string }) => timeStamp(s.lastChangeDateTime) as string;

/** The sales area and sold-to party, alike in both versions. */
function organization(s: SalesOrderState): Entity {
  return {
    SalesOrderType: 'OR',
    SalesOrganization: '1710',
    DistributionChannel: '10',
    OrganizationDivision: '00',
    SalesGroup: '',
    SalesOffice: '',
    SalesDistrict: '',
    SoldToParty: s.soldToParty ?? '17100001',
  };
}

/** Shipping, blocks, terms and the process status, alike in both versions. */
function terms(s: SalesOrderState): Entity {
  return {
    ShippingCondition: '01',
    CompleteDeliveryIsDefined: false,
    HeaderBillingBlockReason: '',
    DeliveryBlockReason: s.deliveryBlockReason ?? '',
    IncotermsClassification: 'EXW',
    CustomerPaymentTerms: '0001',
    OverallSDProcessStatus: s.overallSDProcessStatus ?? 'A',
  };
}

/** Header fields in the order the gateway lists them; a realistic subset of A_SalesOrderType. */
export function renderV2(s: SalesOrderState, createdMs: number, base: string, omitDelivery: boolean): Entity {
  const changedMs = Date.parse(s.lastChangeDateTime);
  const createdDay = createdMs - (createdMs % DAY_MS);
  const uri = `${base}${ENTITY_SETS.v2}${keyPredicate(s.salesOrder)}`;
  const deferred = (name: string) => ({ __deferred: { uri: `${uri}/${name}` } });
  return {
    __metadata: {
      id: uri,
      uri,
      type: 'API_SALES_ORDER_SRV.A_SalesOrderType',
      // The ETag URL-encodes the colons.
      etag: `W/"datetimeoffset'${encodeURIComponent(stamp7(s))}'"`,
    },
    SalesOrder: s.salesOrder,
    ...organization(s),
    CreationDate: `/Date(${createdDay})/`,
    CreatedByUser: 'CB9980000010',
    LastChangeDate: `/Date(${changedMs - (changedMs % DAY_MS)})/`,
    ExternalDocumentID: '',
    LastChangeDateTime: `/Date(${changedMs}+0000)/`,
    PurchaseOrderByCustomer: s.customerReference ?? '',
    CustomerPurchaseOrderDate: null,
    SalesOrderDate: `/Date(${createdDay})/`,
    TotalNetAmount: s.totalNetAmount ?? '0.00',
    ...(omitDelivery ? {} : { OverallDeliveryStatus: s.overallDeliveryStatus ?? '' }),
    TotalBlockStatus: '',
    OverallOrdReltdBillgStatus: '',
    TransactionCurrency: s.currency ?? 'EUR',
    SDDocumentReason: '',
    PricingDate: `/Date(${createdDay})/`,
    RequestedDeliveryDate: s.requestedDeliveryDate ? `/Date(${Date.parse(s.requestedDeliveryDate)})/` : null,
    ...terms(s),
    TotalCreditCheckStatus: '',
    OverallTotalDeliveryStatus: s.overallTotalDeliveryStatus ?? '',
    OverallSDDocumentRejectionSts: s.rejectionStatus ?? '',
    to_Item: deferred('to_Item'),
    to_Partner: deferred('to_Partner'),
    to_PricingElement: deferred('to_PricingElement'),
    to_Text: deferred('to_Text'),
  };
}

/** A realistic subset of the V4 SalesOrder header, in the order the service lists it. */
export function renderV4(s: SalesOrderState, createdMs: number): Entity {
  const createdDay = new Date(createdMs - (createdMs % DAY_MS)).toISOString().slice(0, 10);
  const compact = stamp7(s).replace(/[-:TZ]/g, '');
  return {
    '@odata.etag': `W/"SADL-0${compact.slice(0, 14)}C~${compact}"`,
    SalesOrder: s.salesOrder,
    ...organization(s),
    CreationDate: createdDay,
    CreatedByUser: 'CB9980000010',
    LastChangeDateTime: stamp7(s),
    PurchaseOrderByCustomer: s.customerReference ?? '',
    CustomerPurchaseOrderDate: null,
    SalesOrderDate: createdDay,
    TotalNetAmount: Number(s.totalNetAmount ?? '0'),
    TransactionCurrency: s.currency ?? 'EUR',
    SDDocumentReason: '',
    PricingDate: createdDay,
    RequestedDeliveryDate: s.requestedDeliveryDate ?? null,
    ...terms(s),
    OverallDeliveryStatus: s.overallDeliveryStatus ?? '',
    OverallDeliveryBlockStatus: s.deliveryBlockReason ? 'C' : '',
    OverallSDDocumentRejectionSts: s.rejectionStatus ?? '',
    TotalCreditCheckStatus: '',
  };
}

/**
 * Applies `$select`: naming a property the entity type does not have fails the whole request, as on SAP.
 * Returns the selected entity or the error answer.
 */
export function select(api: SandboxApi, entity: Entity, list: string | null): Entity | Answer {
  if (list === null || list.trim() === '*') return entity;
  const annotation = api === 'v2' ? '__metadata' : '@odata.etag';
  const selected: Entity = { [annotation]: entity[annotation] };
  for (const name of list.split(',').map((n) => n.trim())) {
    if (name === annotation || !(name in entity)) {
      const type = api === 'v2' ? 'A_SalesOrderType' : 'SalesOrder';
      return odataError(api, 400, '/IWBEP/CM_MGW_RT/022', `Property '${name}' not found in type '${type}'`);
    }
    selected[name] = entity[name];
  }
  return selected;
}

export function isAnswer(value: Entity | Answer): value is Answer {
  return typeof (value as Answer).status === 'number' && 'body' in value;
}

/** A single entity's answer: V2 wraps it in "d", V4 puts `@odata.context` beside its fields. */
export function entityAnswer(api: SandboxApi, entity: Entity, base: string): Answer {
  if (api === 'v2') {
    const etag = (entity.__metadata as { etag: string }).etag;
    return { status: 200, body: { d: entity }, headers: { etag } };
  }
  const { '@odata.etag': etag, ...fields } = entity;
  return {
    status: 200,
    body: {
      '@odata.context': `${base}${SERVICE_PATHS.v4}/$metadata#SalesOrder/$entity`,
      '@odata.etag': etag,
      ...fields,
    },
    headers: { etag: String(etag), 'odata-version': '4.0' },
  };
}

export function collectionAnswer(api: SandboxApi, entities: Entity[], base: string): Answer {
  if (api === 'v2') return { status: 200, body: { d: { results: entities } } };
  return {
    status: 200,
    body: { '@odata.context': `${base}${SERVICE_PATHS.v4}/$metadata#SalesOrder`, value: entities },
    headers: { 'odata-version': '4.0' },
  };
}

/** Error bodies: V2's message is `{lang, value}`, V4's a string. */
export function odataError(api: SandboxApi, status: number, code: string, text: string): Answer {
  const message = api === 'v2' ? { lang: 'en', value: text } : text;
  return { status, body: { error: { code, message } } };
}
