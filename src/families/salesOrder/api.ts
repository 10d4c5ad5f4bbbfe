// Sales orders through the released OData API of the chosen version (V2 `API_SALES_ORDER_SRV`, V4
// `CE_SALESORDER_0001`: services.ts), read by the shared reader (src/s4/odataReader.ts) and mapped by
// salesOrder.ts.
import { createODataReader, type KeyResult as EntityResult, type ODataReader } from '../../s4/odataReader.js';
import type { ApiVersion } from '../../s4/odataService.js';
import { type SalesOrder, toSalesOrder } from './entity.js';
import { odataV2, odataV4 } from './services.js';

/** One order's share of a collection read: its header, null when S/4HANA has no such order, or why not. */
export type KeyResult = EntityResult<SalesOrder>;

export type SalesOrderApi = ODataReader<SalesOrder>;

export interface SalesOrderApiOptions {
  destination: string;
  timeoutMs: number;
  version?: ApiVersion;
}

export function createSalesOrderApi(options: SalesOrderApiOptions): SalesOrderApi {
  return createODataReader(options, options.version === 'v4' ? odataV4 : odataV2, (entity, key, service) =>
    toSalesOrder(entity, key, service.time),
  );
}
