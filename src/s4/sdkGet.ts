// One GET through the SAP Cloud SDK's own request path, for a destination behind a proxy (the Cloud Connector of
// an on-premise system), answered whatever its status, as httpGet.ts answers a direct one.
import { executeHttpRequest } from '@sap-cloud-sdk/http-client';
import type { HttpAnswer } from './httpGet.js';

/** GETs `path` (encoded, with its own query string or none) with `query` added, through the destination. */
export async function sdkGet(
  destinationName: string,
  path: string,
  query: Record<string, string>,
  timeoutMs: number,
): Promise<HttpAnswer> {
  try {
    const response = await executeHttpRequest(
      { destinationName, useCache: true },
      {
        method: 'get',
        url: path,
        params: query,
        // The SDK leaves values unencoded by default, and a $filter has spaces; keys keep their `$`.
        parameterEncoder: (params) =>
          Object.fromEntries(
            Object.entries(params).map(([key, value]) => [key, encodeURIComponent(String(value))]),
          ),
        timeout: timeoutMs, // the SDK has none by default
        headers: { accept: 'application/json' },
      },
      { fetchCsrfToken: false },
    );
    return { status: response.status, body: JSON.stringify(response.data), retryAfter: undefined };
  } catch (err) {
    const response = (
      err as { response?: { status?: unknown; data?: unknown; headers?: Record<string, unknown> } }
    ).response;
    if (typeof response?.status !== 'number') throw err;
    const retryAfter = response.headers?.['retry-after'];
    return {
      status: response.status,
      body: typeof response.data === 'string' ? response.data : JSON.stringify(response.data ?? null),
      retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
    };
  }
}
