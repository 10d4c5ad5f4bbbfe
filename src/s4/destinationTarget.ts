// Where S/4HANA requests go, resolved from the BTP destination by the SAP Cloud SDK (destination service on
// Cloud Foundry, the `destinations` environment variable locally) and kept for a while. Resolving costs the
// SDK a lookup, a log call, header building and an agent-cache hash per request, a large share of the service's
// CPU with one event per read, so it is done once per `refreshMs` instead of once per read.
import type { Agent } from 'node:http';
import { buildHttpRequest } from '@sap-cloud-sdk/http-client';

export type Target =
  /** Straight to S/4HANA: base URL, auth and other headers, query parameters and agent from the destination. */
  | {
      kind: 'direct';
      baseUrl: string;
      headers: Record<string, string>;
      params: Record<string, string>;
      agent: Agent | undefined;
    }
  /** Through a proxy (Cloud Connector for on-premise systems): left to the SDK's own request path. */
  | { kind: 'proxied' };

export interface DestinationTarget {
  get(): Promise<Target>;
  /** Forgets the resolved target, e.g. after S/4HANA refused its credentials; the next get() resolves again. */
  invalidate(): void;
}

export function createDestinationTarget(
  destinationName: string,
  options: { refreshMs?: number; now?: () => number } = {},
): DestinationTarget {
  // Shorter than the SDK's own destination cache (5 minutes) and than any token lifetime it hands out.
  const refreshMs = options.refreshMs ?? 60_000;
  const now = options.now ?? Date.now;
  let cached: { target: Promise<Target>; until: number } | undefined;

  async function resolve(): Promise<Target> {
    const config = await buildHttpRequest({ destinationName, useCache: true });
    if (config.proxy) return { kind: 'proxied' };
    return {
      kind: 'direct',
      baseUrl: config.baseURL.replace(/\/+$/, ''),
      headers: config.headers,
      params: config.params ?? {},
      agent: config.httpsAgent ?? config.httpAgent,
    };
  }

  return {
    get() {
      if (cached === undefined || now() >= cached.until) {
        const target = resolve();
        cached = { target, until: now() + refreshMs };
        // A failed resolution is not kept: the next read tries again.
        target.catch(() => {
          if (cached?.target === target) cached = undefined;
        });
      }
      return cached.target;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
