// Where customer returns are read in each API version, and what is selected: V2 `API_CUSTOMER_RETURN_SRV`,
// entity set A_CustomerReturn with `to_Item`; V4 `CE_CUSTOMERRETURN_0001`, entity set CustomerReturn with
// `_Item`, where V4's Product stands for V2's Material. Every selected property is in both releases' metadata
// (test/unit/customerReturnMetadata.test.ts), so selecting them cannot fail a request, and the answer holds the
// fields read rather than the 55 header and 88 item properties of each return.

import { asObject, UnexpectedResponseError } from '../../s4/odataEntity.js';
import { keyLiteral, type ODataService } from '../../s4/odataService.js';
import { v2Envelope } from '../../s4/odataV2.js';
import { v4Envelope } from '../../s4/odataV4.js';
import type { ReturnDialect } from './entity.js';

export const V2_SERVICE_PATH = '/sap/opu/odata/sap/API_CUSTOMER_RETURN_SRV';
export const V4_SERVICE_PATH = '/sap/opu/odata4/sap/api_customerreturn/srvd_a2x/sap/customerreturn/0001';

export const HEADER_PROPERTIES = [
  'CustomerReturn',
  'CustomerReturnType',
  'SoldToParty',
  'PurchaseOrderByCustomer',
  'SDDocumentReason',
  'ReferenceSDDocument',
  'ReferenceSDDocumentCategory',
  'OverallSDProcessStatus',
  'OverallSDDocumentRejectionSts',
  'RetsMgmtProcessingStatus',
  'CreationDate',
  'LastChangeDateTime',
] as const;

/** The item properties both versions name alike; each adds its product property. */
const ITEM_PROPERTIES = [
  'CustomerReturnItem',
  'ReturnReason',
  'ReturnsRefundType',
  'CustRetItmFollowUpActivity',
  'ReferenceSDDocument',
  'ReferenceSDDocumentItem',
] as const;

export const V2_ITEM_PROPERTIES = [...ITEM_PROPERTIES, 'Material'];
export const V4_ITEM_PROPERTIES = [...ITEM_PROPERTIES, 'Product'];

export type ReturnService = ODataService & ReturnDialect;

const entityPath = (set: string) => (key: string) => `${set}(${encodeURIComponent(keyLiteral(key))})`;

export const customerReturnV2: ReturnService = {
  ...v2Envelope,
  keyProperty: 'CustomerReturn',
  entityPath: entityPath(`${V2_SERVICE_PATH}/A_CustomerReturn`),
  collectionPath: `${V2_SERVICE_PATH}/A_CustomerReturn`,
  query: {
    $format: 'json',
    $select: [...HEADER_PROPERTIES, ...V2_ITEM_PROPERTIES.map((name) => `to_Item/${name}`)].join(','),
    $expand: 'to_Item',
  },
  items(entity) {
    const expanded = asObject(entity.to_Item, '"to_Item" object: items not expanded');
    if (!Array.isArray(expanded.results))
      throw new UnexpectedResponseError('response has no "to_Item.results" array');
    // Items left out would leave out their return reasons: a warranty case could be missed.
    if (expanded.__next !== undefined)
      throw new UnexpectedResponseError('response pages the items of a return');
    return expanded.results.map((item) => asObject(item, 'item object in "to_Item.results"'));
  },
  materialProperty: 'Material',
};

export const customerReturnV4: ReturnService = {
  ...v4Envelope,
  keyProperty: 'CustomerReturn',
  entityPath: entityPath(`${V4_SERVICE_PATH}/CustomerReturn`),
  collectionPath: `${V4_SERVICE_PATH}/CustomerReturn`,
  query: {
    $select: HEADER_PROPERTIES.join(','),
    $expand: `_Item($select=${V4_ITEM_PROPERTIES.join(',')})`,
  },
  items(entity) {
    if (!Array.isArray(entity._Item))
      throw new UnexpectedResponseError('response has no "_Item" array: items not expanded');
    if (entity['_Item@odata.nextLink'] !== undefined) {
      throw new UnexpectedResponseError('response pages the items of a return');
    }
    return entity._Item.map((item) => asObject(item, 'item object in "_Item"'));
  },
  materialProperty: 'Product',
};
