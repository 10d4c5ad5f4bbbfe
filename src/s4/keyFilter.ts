// Many documents in one collection read: the `$filter` of key terms joined by `or` (both API versions accept
// it; `in` is not advertised: docs/s4hana.md, Key filters), and the matching of the answer to the request.

import { UnexpectedResponseError } from './odataEntity.js';
import { keyLiteral } from './odataService.js';

/** Gateways and proxies commonly refuse longer request lines; 4,096 is safe for all of them. */
export const MAX_URL_LENGTH = 4096;

const SEPARATOR = encodeURIComponent(' or ').length;

/**
 * The filter on `property` for the longest prefix of `keys` that has at most `maxKeys` keys and whose encoded
 * form fits in `room` characters (what the URL has left), with the keys it covers. Keys are escaped as in a key
 * predicate.
 */
export function keyFilter(
  property: string,
  keys: readonly string[],
  maxKeys: number,
  room: number,
): { filter: string; keys: string[] } {
  const taken: string[] = [];
  const terms: string[] = [];
  let length = 0;
  for (const key of keys) {
    if (taken.length >= maxKeys) break;
    const term = `${property} eq ${keyLiteral(key)}`;
    const added = encodeURIComponent(term).length + (terms.length > 0 ? SEPARATOR : 0);
    if (length + added > room) break;
    length += added;
    taken.push(key);
    terms.push(term);
  }
  return { filter: terms.join(' or '), keys: taken };
}

/**
 * Pairs each requested key with its entity, whose key is its `property`. An entity absent from a complete
 * answer does not exist (as a 404 says for one); when the server paged the answer, absent keys were not answered
 * and are left out of the map. An entity returned twice, or one not asked for, means the answer is not what was
 * asked: the whole answer is refused, since nothing in it can be trusted to belong to the right key.
 */
export function matchCollection<T extends Record<string, unknown>>(
  property: string,
  requested: readonly string[],
  entities: readonly T[],
  complete: boolean,
): Map<string, T | null> {
  const wanted = new Set(requested);
  const found = new Map<string, T>();
  for (const entity of entities) {
    const key = entity[property];
    if (typeof key !== 'string' || !wanted.has(key)) {
      throw new UnexpectedResponseError(
        `collection answer has ${property} ${JSON.stringify(key)}, not asked for`,
      );
    }
    if (found.has(key)) throw new UnexpectedResponseError(`collection answer has ${property} ${key} twice`);
    found.set(key, entity);
  }
  const matched = new Map<string, T | null>();
  for (const key of requested) {
    const entity = found.get(key);
    if (entity !== undefined) matched.set(key, entity);
    else if (complete) matched.set(key, null);
  }
  return matched;
}
