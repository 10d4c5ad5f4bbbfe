import { executeHttpRequest } from '@sap-cloud-sdk/http-client';
import { createDestinationTarget } from './destinationTarget.js';
import { HttpStatusError, httpGet } from './httpGet.js';
import { type SalesOrder, toSalesOrder, UnexpectedResponseError } from './salesOrder.js';

const SERVICE_PATH = '/sap/opu/odata/sap/API_SALES_ORDER_SRV';

export interface SalesOrderApi {
  /** The current header of the order, or null when S/4HANA answers 404 (never existed, or deleted). */
  read(salesOrder: string): Promise<SalesOrder | null>;
}

/**
 * Reads A_SalesOrder through the released OData V2 API with a BTP destination (the destination service on
 * Cloud Foundry, the SDK's `destinations` environment variable locally). The destination is resolved by the
 * SDK and reused (destinationTarget.ts); a destination behind a proxy goes through the SDK's request path.
 * Failures are thrown as they come: errors.ts classifies them by HTTP status and socket code.
 */
export function createSalesOrderApi(options: { destination: string; timeoutMs: number }): SalesOrderApi {
  const target = createDestinationTarget(options.destination);
  const destination = { destinationName: options.destination, useCache: true };
  return {
    async read(salesOrder) {
      // The key is validated to [A-Za-z0-9]{1,10} by the parser; escaping it anyway keeps this function safe
      // on its own: quotes doubled per OData, then URL-encoded.
      const path = `${SERVICE_PATH}/A_SalesOrder('${encodeURIComponent(salesOrder.replaceAll("'", "''"))}')`;
      const resolved = await target.get();
      if (resolved.kind === 'proxied') return readThroughSdk(path, salesOrder);

      const answer = await httpGet(resolved, path, { $format: 'json' }, options.timeoutMs);
      if (answer.status === 404) return null;
      // Refused credentials may be a token that expired within the refresh period: resolve again next time.
      if (answer.status === 401 || answer.status === 403) target.invalidate();
      if (answer.status >= 300 && answer.status < 400) {
        // No status on the error: a redirect (typically to a logon page) is a destination to fix, so the
        // message waits (transient) instead of being dead-lettered.
        throw new UnexpectedResponseError(
          `S/4HANA redirected (HTTP ${answer.status}): check the destination`,
        );
      }
      if (answer.status < 200 || answer.status >= 300) {
        throw new HttpStatusError(answer.status, odataMessage(answer.body));
      }
      let body: unknown;
      try {
        body = JSON.parse(answer.body);
      } catch {
        throw new UnexpectedResponseError('S/4HANA answered with a body that is not JSON');
      }
      return toSalesOrder(body, salesOrder);
    },
  };

  async function readThroughSdk(path: string, salesOrder: string): Promise<SalesOrder | null> {
    try {
      const response = await executeHttpRequest(
        destination,
        {
          method: 'get',
          url: path,
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
  }
}

/** The message text of an OData V2 error body, if it is one; clipped, as it ends up in logs and reasons. */
function odataMessage(body: string): string {
  try {
    const value = (JSON.parse(body) as { error?: { message?: { value?: unknown } } }).error?.message?.value;
    return typeof value === 'string' ? value.slice(0, 200) : '';
  } catch {
    return '';
  }
}
