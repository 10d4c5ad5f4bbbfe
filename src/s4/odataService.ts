// What differs between the two OData versions, so that the client, the batching and the sandbox's tests speak
// of one thing: how an answer wraps an entity or a collection, how times and error texts are written (the
// envelope), and, per entity set read, where the entity and the collection live and which property is the key.
// Each mapping to the service's own type is one for both versions (each family's entity.ts).
import type { TimeFormat } from './odataEntity.js';

export type ApiVersion = 'v2' | 'v4';

/** One entity of a collection answer, and whether the server said there is more (server-driven paging). */
export interface CollectionPage {
  entities: Array<Record<string, unknown>>;
  complete: boolean;
}

/** How one OData version wraps what it answers. */
export interface ODataEnvelope {
  version: ApiVersion;
  /** The entity inside a single read's answer. */
  entity(body: unknown): Record<string, unknown>;
  /** The entities inside a collection answer. */
  collection(body: unknown): CollectionPage;
  time: TimeFormat;
  /** The message text of an error body, if it is one; '' otherwise. */
  errorMessage(body: unknown): string;
}

/** One entity set, read through its version's envelope. */
export interface ODataService extends ODataEnvelope {
  /** The key property: what a collection read filters on and what pairs answers with keys. */
  keyProperty: string;
  /** The encoded path of one entity. */
  entityPath(key: string): string;
  /** The path of the entity set, for reads with `$filter`. */
  collectionPath: string;
  /** Query options every read carries. */
  query: Record<string, string>;
}

/** A key literal as OData writes it in a key predicate or a filter: quoted, inner quotes doubled. */
export function keyLiteral(key: string): string {
  return `'${key.replaceAll("'", "''")}'`;
}
