// Where sales orders are read in each API version: V2 `API_SALES_ORDER_SRV`, entity set A_SalesOrder; V4
// `CE_SALESORDER_0001`, entity set SalesOrder. The envelopes are the shared ones (src/s4/odataV2.ts, odataV4.ts).
import { keyLiteral, type ODataService } from '../../s4/odataService.js';
import { v2Envelope } from '../../s4/odataV2.js';
import { v4Envelope } from '../../s4/odataV4.js';

const V2_SERVICE_PATH = '/sap/opu/odata/sap/API_SALES_ORDER_SRV';
const V4_SERVICE_PATH = '/sap/opu/odata4/sap/api_salesorder/srvd_a2x/sap/salesorder/0001';

// No $select: OverallDeliveryStatus exists only in newer releases, and naming a property the release lacks
// fails the whole request. The header is a few kilobytes, 50 of them well inside the answer limit.
export const odataV2: ODataService = {
  ...v2Envelope,
  keyProperty: 'SalesOrder',
  entityPath: (salesOrder) =>
    `${V2_SERVICE_PATH}/A_SalesOrder(${encodeURIComponent(keyLiteral(salesOrder))})`,
  collectionPath: `${V2_SERVICE_PATH}/A_SalesOrder`,
  query: { $format: 'json' },
};

// Every one of these is in the V4 header on every release (EDMX), so selecting them cannot fail the request.
const SELECT = [
  'SalesOrder',
  'SoldToParty',
  'PurchaseOrderByCustomer',
  'RequestedDeliveryDate',
  'LastChangeDateTime',
  'OverallSDProcessStatus',
  'OverallDeliveryStatus',
  'OverallSDDocumentRejectionSts',
  'DeliveryBlockReason',
].join(',');

export const odataV4: ODataService = {
  ...v4Envelope,
  keyProperty: 'SalesOrder',
  entityPath: (salesOrder) => `${V4_SERVICE_PATH}/SalesOrder(${encodeURIComponent(keyLiteral(salesOrder))})`,
  collectionPath: `${V4_SERVICE_PATH}/SalesOrder`,
  query: { $select: SELECT },
};
