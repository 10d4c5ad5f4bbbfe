// Each family's collection for reconciliation, as the composition will describe it: the service event reads use,
// the open filter and the family's own mapping (src/reconcile/collection.ts).
import { type CustomerReturn, toCustomerReturn } from '../../src/families/customerReturn/entity.js';
import { customerReturnV2, customerReturnV4 } from '../../src/families/customerReturn/services.js';
import { type SalesOrder, toSalesOrder } from '../../src/families/salesOrder/entity.js';
import { odataV2, odataV4 } from '../../src/families/salesOrder/services.js';
import type { ReconcileCollection } from '../../src/reconcile/collection.js';
import type { ApiVersion } from '../../src/s4/odataService.js';

export function salesOrders(version: ApiVersion): ReconcileCollection<SalesOrder> {
  const service = version === 'v4' ? odataV4 : odataV2;
  return {
    family: 'salesOrder',
    service,
    openFilter: "OverallSDProcessStatus ne 'C'",
    map: (entity, key) => toSalesOrder(entity, key, service.time),
  };
}

export function customerReturns(version: ApiVersion): ReconcileCollection<CustomerReturn> {
  const service = version === 'v4' ? customerReturnV4 : customerReturnV2;
  return {
    family: 'customerReturn',
    service,
    openFilter: "OverallSDProcessStatus ne 'C' and OverallSDDocumentRejectionSts ne 'C'",
    map: (entity, key) => toCustomerReturn(entity, key, service),
  };
}
