// Where outbound deliveries are read: the V2 API API_OUTBOUND_DELIVERY_SRV (version 0002), entity set
// A_OutbDeliveryHeader, only the header properties the state needs.
import { keyLiteral, type ODataService } from '../../../src/s4/odataService.js';
import { v2Envelope } from '../../../src/s4/odataV2.js';

export const V2_SERVICE_PATH = '/sap/opu/odata/sap/API_OUTBOUND_DELIVERY_SRV;v=0002';
export const DELIVERY_SET = `${V2_SERVICE_PATH}/A_OutbDeliveryHeader`;

export const HEADER_PROPERTIES = [
  'DeliveryDocument',
  'OverallGoodsMovementStatus',
  'SoldToParty',
  'LastChangeDate',
];

export const deliveryV2: ODataService = {
  ...v2Envelope,
  keyProperty: 'DeliveryDocument',
  entityPath: (key) => `${DELIVERY_SET}(${encodeURIComponent(keyLiteral(key))})`,
  collectionPath: DELIVERY_SET,
  query: { $format: 'json', $select: HEADER_PROPERTIES.join(',') },
};
