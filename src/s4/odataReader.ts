import { type Context, ROOT_CONTEXT } from '../telemetry/tracing.js';
import { answerBody } from './answerBody.js';
import { createDestinationTarget } from './destinationTarget.js';
import { buildUrl, type HttpAnswer, httpGet } from './httpGet.js';
import { keyFilter, MAX_URL_LENGTH, matchCollection } from './keyFilter.js';
import type { ApiVersion, ODataService } from './odataService.js';
import { s4Failure, wrapFailure } from './s4Failure.js';
import { sdkGet } from './sdkGet.js';

/** One key's share of a collection read: its entity mapped, null when S/4HANA has no such entity, or why not. */
export type KeyResult<T> = { document: T | null } | { error: unknown };

export interface ODataReader<T> {
  version: ApiVersion;
  /**
   * The current entity, or null when S/4HANA answers 404 (never existed, or deleted). `trace`: the span the
   * request goes under.
   */
  read(key: string, trace?: Context): Promise<T | null>;
  /**
   * Reads several entities in one collection request. The map holds every key the answer covers; a key missing
   * from it was not read (the URL had no room for it, or the server paged the answer) and must be asked again.
   */
  readMany(keys: readonly string[], trace?: Context): Promise<Map<string, KeyResult<T>>>;
}

export interface ODataReaderOptions {
  destination: string;
  timeoutMs: number;
}

/** Maps one entity (unwrapped from its envelope) read for `key`; throws when it is not that entity. */
export type EntityMapping<T, S extends ODataService> = (
  entity: Record<string, unknown>,
  key: string,
  service: S,
) => T;

/**
 * Reads one entity set of a released OData API with a BTP destination (the destination service on Cloud
 * Foundry, the SDK's `destinations` environment variable locally). The destination is resolved by the SDK and
 * reused (destinationTarget.ts); a destination behind a proxy goes through the SDK's request path. Every failure
 * is thrown with its kind stated (s4Failure.ts).
 */
export function createODataReader<T, S extends ODataService>(
  options: ODataReaderOptions,
  service: S,
  map: EntityMapping<T, S>,
): ODataReader<T> {
  const target = createDestinationTarget(options.destination);

  async function get(path: string, query: Record<string, string>, trace: Context): Promise<HttpAnswer> {
    const resolved = await target.get().catch((err) => {
      throw wrapFailure(err, `resolving destination ${options.destination}`);
    });
    try {
      if (resolved.kind === 'proxied')
        return await sdkGet(options.destination, path, query, options.timeoutMs);
      const answer = await httpGet(resolved, buildUrl(resolved, path, query), options.timeoutMs, trace);
      // Refused credentials may be a token that expired within the refresh period: resolve again next time.
      if (answer.status === 401 || answer.status === 403) target.invalidate();
      return answer;
    } catch (err) {
      throw wrapFailure(err, 'S/4HANA read');
    }
  }

  return {
    version: service.version,
    async read(key, trace = ROOT_CONTEXT) {
      const answer = await get(service.entityPath(key), service.query, trace);
      if (answer.status === 404) return null;
      return map(service.entity(answerBody(answer, service.errorMessage)), key, service);
    },

    async readMany(requested, trace = ROOT_CONTEXT) {
      const resolved = await target.get().catch((err) => {
        throw wrapFailure(err, `resolving destination ${options.destination}`);
      });
      // What the URL takes without the filter's value; through a proxy the base URL is the SDK's, not known here.
      const base =
        resolved.kind === 'direct'
          ? buildUrl(resolved, service.collectionPath, { ...service.query, $filter: '' }).length
          : 512 + service.collectionPath.length;
      const { filter, keys } = keyFilter(
        service.keyProperty,
        requested,
        requested.length,
        MAX_URL_LENGTH - base,
      );
      if (keys.length === 0) {
        throw s4Failure(
          'transient',
          `the destination's URL leaves no room for a filter within ${MAX_URL_LENGTH}`,
        );
      }
      const answer = await get(service.collectionPath, { ...service.query, $filter: filter }, trace);
      if (answer.status === 404) {
        // The entity set itself is missing: a destination or S4_API to fix, not an entity that is gone.
        throw s4Failure(
          'transient',
          `S/4HANA has no ${service.collectionPath} (HTTP 404): check the destination and S4_API`,
          {
            status: 404,
          },
        );
      }
      const page = service.collection(answerBody(answer, service.errorMessage));
      const results = new Map<string, KeyResult<T>>();
      for (const [key, entity] of matchCollection(service.keyProperty, keys, page.entities, page.complete)) {
        try {
          results.set(key, { document: entity === null ? null : map(entity, key, service) });
        } catch (error) {
          // One entity S/4HANA wrote oddly fails its own events only, not the others read with it.
          results.set(key, { error });
        }
      }
      return results;
    },
  };
}
