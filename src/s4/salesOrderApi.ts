import { executeHttpRequest } from '@sap-cloud-sdk/http-client';
import { type SalesOrder, toSalesOrder } from './salesOrder.js';

const SERVICE_PATH = '/sap/opu/odata/sap/API_SALES_ORDER_SRV';

export interface SalesOrderApi {
  /** The current header of the order, or null when S/4HANA answers 404 (never existed, or deleted). */
  read(salesOrder: string): Promise<SalesOrder | null>;
}

/**
 * Reads A_SalesOrder through the released OData V2 API with a BTP destination (the destination service on
 * Cloud Foundry, the SDK's `destinations` environment variable locally). Failures are thrown as they come:
 * errors.ts classifies them by HTTP status and socket code.
 */
export function createSalesOrderApi(options: { destination: string; timeoutMs: number }): SalesOrderApi {
  const destination = { destinationName: options.destination, useCache: true };
  return {
    async read(salesOrder) {
      // The key is validated to [A-Za-z0-9]{1,10} by the parser; escaping it anyway keeps this function safe
      // on its own: quotes doubled per OData, then URL-encoded.
      const key = encodeURIComponent(salesOrder.replaceAll("'", "''"));
      try {
        const response = await executeHttpRequest(
          destination,
          {
            method: 'get',
            url: `${SERVICE_PATH}/A_SalesOrder('${key}')`,
            params: { $format: 'json' },
            timeout: options.timeoutMs, // the SDK has none by default
            headers: { accept: 'application/json' },
          },
          { fetchCsrfToken: false },
        );
        return toSalesOrder(response.data, salesOrder);
      } catch (err) {
        if ((err as { response?: { status?: number } }).response?.status === 404) return null;
        throw err;
      }
    },
  };
}
