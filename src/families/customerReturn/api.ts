// Reads customer returns with their items through the shared OData reader: the same destination, `S4_API`
// switch, failure kinds and collection reads as sales orders.
import { createODataReader, type ODataReader } from '../../s4/odataReader.js';
import type { ApiVersion } from '../../s4/odataService.js';
import { type CustomerReturn, toCustomerReturn } from './entity.js';
import { customerReturnV2, customerReturnV4 } from './services.js';

export type CustomerReturnApi = ODataReader<CustomerReturn>;

export function createCustomerReturnApi(options: {
  destination: string;
  timeoutMs: number;
  version?: ApiVersion;
}): CustomerReturnApi {
  const service = options.version === 'v4' ? customerReturnV4 : customerReturnV2;
  return createODataReader(options, service, toCustomerReturn);
}
