// Customer returns as each API version writes them, for the stand-in (s4Returns.ts): V2
// (API_CUSTOMER_RETURN_SRV, A_CustomerReturnType) with `__metadata`, `/Date(ms)/` times and amounts as strings;
// V4 (CE_CUSTOMERRETURN_0001, CustomerReturn) with `@odata.etag`, ISO times with 7 fractional digits and numbers,
// and its items' Product where V2 has Material. Items are expanded and properties selected as the query asks.
import { type Answer, type Entity, isAnswer, odataError, type SandboxApi } from './s4Entities.js';
import { timeStamp } from './s4Filter.js';

export interface ReturnItemState {
  customerReturnItem: string;
  returnReason?: string;
  returnsRefundType?: string;
  followUpActivity?: string;
  material?: string;
  referenceSDDocumentItem?: string;
}

export interface CustomerReturnState {
  customerReturn: string;
  /** ISO instant */
  lastChangeDateTime: string;
  soldToParty?: string;
  customerReference?: string;
  /** SDDocumentReason */
  orderReason?: string;
  referenceSDDocument?: string;
  /** C: the reference is a sales order. */
  referenceSDDocumentCategory?: string;
  overallSDProcessStatus?: string;
  rejectionStatus?: string;
  returnsProcessingStatus?: string;
  items?: ReturnItemState[];
}

export const SERVICES: Record<SandboxApi, { path: string; set: string; type: string; item: string }> = {
  v2: {
    path: '/sap/opu/odata/sap/API_CUSTOMER_RETURN_SRV',
    set: 'A_CustomerReturn',
    type: 'A_CustomerReturnType',
    item: 'A_CustomerReturnItemType',
  },
  v4: {
    path: '/sap/opu/odata4/sap/api_customerreturn/srvd_a2x/sap/customerreturn/0001',
    set: 'CustomerReturn',
    type: 'CustomerReturn',
    item: 'CustomerReturnItem',
  },
};
export const NAVIGATION: Record<SandboxApi, string> = { v2: 'to_Item', v4: '_Item' };
const DAY_MS = 86_400_000;

/** A realistic subset of the header and its items, in the order the service lists them. */
export function render(api: SandboxApi, s: CustomerReturnState, createdMs: number, base: string): Entity {
  const changedMs = Date.parse(s.lastChangeDateTime);
  const stamp = timeStamp(s.lastChangeDateTime) as string;
  const createdDay = createdMs - (createdMs % DAY_MS);
  const v2 = api === 'v2';
  // V2 writes Edm.DateTime as /Date(ms)/ and Edm.DateTimeOffset with an offset; V4 as ISO with 7 digits.
  const day = v2 ? `/Date(${createdDay})/` : new Date(createdDay).toISOString().slice(0, 10);
  const uri = `${base}${SERVICES.v2.path}/${SERVICES.v2.set}('${encodeURIComponent(s.customerReturn)}')`;
  const items = (s.items ?? []).map((item) => ({
    ...(v2 ? { __metadata: { type: `API_CUSTOMER_RETURN_SRV.${SERVICES.v2.item}` } } : {}),
    CustomerReturn: s.customerReturn,
    CustomerReturnItem: item.customerReturnItem,
    CustomerReturnItemCategory: 'REN2',
    CustomerReturnItemText: 'Returned product',
    [v2 ? 'Material' : 'Product']: item.material ?? 'MZ-FG-E15',
    RequestedQuantity: v2 ? '1' : 1,
    [v2 ? 'RequestedQuantityUnit' : 'RequestedQuantitySAPUnit']: 'PC',
    ReturnReason: item.returnReason ?? '',
    CustRetItmFollowUpActivity: item.followUpActivity ?? '0001',
    ReturnsRefundType: item.returnsRefundType ?? '',
    ReferenceSDDocument: s.referenceSDDocument ?? '',
    ReferenceSDDocumentItem: item.referenceSDDocumentItem ?? '',
    ReferenceSDDocumentCategory: s.referenceSDDocumentCategory ?? '',
    SDProcessStatus: s.overallSDProcessStatus ?? 'A',
  }));
  return {
    ...(v2
      ? {
          __metadata: {
            id: uri,
            uri,
            type: `API_CUSTOMER_RETURN_SRV.${SERVICES.v2.type}`,
            // LastChangeDateTime is the ETag (ConcurrencyMode Fixed), at all 7 digits, colons encoded.
            etag: `W/"datetimeoffset'${encodeURIComponent(stamp)}'"`,
          },
        }
      : { '@odata.etag': `W/"${new Date(changedMs).toISOString()}"` }),
    CustomerReturn: s.customerReturn,
    CustomerReturnType: 'CBAR',
    SalesOrganization: '1710',
    DistributionChannel: '10',
    OrganizationDivision: '00',
    SoldToParty: s.soldToParty ?? '17100001',
    CreationDate: day,
    CreatedByUser: 'CB9980000010',
    LastChangeDateTime: v2 ? `/Date(${changedMs}+0000)/` : stamp,
    PurchaseOrderByCustomer: s.customerReference ?? '',
    TotalNetAmount: v2 ? '0.00' : 0,
    TransactionCurrency: 'EUR',
    SDDocumentReason: s.orderReason ?? '',
    RetsMgmtProcess: '',
    ReferenceSDDocument: s.referenceSDDocument ?? '',
    ReferenceSDDocumentCategory: s.referenceSDDocumentCategory ?? '',
    RetsMgmtProcessingStatus: s.returnsProcessingStatus ?? '',
    OverallSDProcessStatus: s.overallSDProcessStatus ?? 'A',
    OverallSDDocumentRejectionSts: s.rejectionStatus ?? '',
    [NAVIGATION[api]]: items,
  };
}

/**
 * The entity as the query asks for it: items expanded or not (V2 then defers them, V4 leaves them out) and
 * `$select` applied to the header and the items; an unknown property is the error answer SAP gives.
 */
export function shape(api: SandboxApi, entity: Entity, query: URLSearchParams): Entity | Answer {
  const nav = NAVIGATION[api];
  const expand = query.get('$expand') ?? '';
  const v4Items = /^_Item(?:\(\$select=([^)]*)\))?$/.exec(expand);
  const expanded = api === 'v2' ? expand === nav : v4Items !== null;
  if (expand !== '' && !expanded)
    return odataError(api, 400, '/IWBEP/CM_MGW_RT/005', `Invalid $expand '${expand}'`);
  const names = (query.get('$select') ?? '').split(',').filter((name) => name !== '');
  const headerNames = names.filter((name) => !name.startsWith(`${nav}/`));
  const itemNames =
    api === 'v2'
      ? names.filter((name) => name.startsWith(`${nav}/`)).map((name) => name.slice(nav.length + 1))
      : (v4Items?.[1] ?? '').split(',').filter((name) => name !== '');
  const { [nav]: items, ...header } = entity;
  const type = SERVICES[api];
  const head = pick(api, header, headerNames, type.type);
  if (isAnswer(head)) return head;
  if (!expanded) {
    const uri = (header.__metadata as { uri?: string } | undefined)?.uri;
    return api === 'v2' ? { ...head, [nav]: { __deferred: { uri: `${uri}/${nav}` } } } : head;
  }
  const picked: Entity[] = [];
  for (const item of items as Entity[]) {
    const one = pick(api, item, itemNames, type.item);
    if (isAnswer(one)) return one;
    picked.push(one);
  }
  return { ...head, [nav]: api === 'v2' ? { results: picked } : picked };
}

function pick(api: SandboxApi, entity: Entity, names: string[], type: string): Entity | Answer {
  if (names.length === 0) return entity;
  const annotation = api === 'v2' ? '__metadata' : '@odata.etag';
  const picked: Entity = annotation in entity ? { [annotation]: entity[annotation] } : {};
  for (const name of names) {
    if (!(name in entity) || name === annotation) {
      return odataError(api, 400, '/IWBEP/CM_MGW_RT/022', `Property '${name}' not found in type '${type}'`);
    }
    picked[name] = entity[name];
  }
  return picked;
}
