// What differs between the two sales-order APIs, so that the client, the batching and the sandbox's tests speak
// of one thing: where the entity and the collection live, how an answer wraps them, how times and error texts
// are written. The mapping to the portal's header is one (salesOrder.ts).
import type { TimeFormat } from './salesOrder.js';

export type ApiVersion = 'v2' | 'v4';

/** One entity of a collection answer, and whether the server said there is more (server-driven paging). */
export interface CollectionPage {
  entities: Array<Record<string, unknown>>;
  complete: boolean;
}

export interface SalesOrderService {
  version: ApiVersion;
  /** The encoded path of one order's entity. */
  entityPath(salesOrder: string): string;
  /** The path of the entity set, for reads with `$filter`. */
  collectionPath: string;
  /** Query options every read carries. */
  query: Record<string, string>;
  /** The entity inside a single read's answer. */
  entity(body: unknown): Record<string, unknown>;
  /** The entities inside a collection answer. */
  collection(body: unknown): CollectionPage;
  time: TimeFormat;
  /** The message text of an error body, if it is one; '' otherwise. */
  errorMessage(body: unknown): string;
}

/** A key literal as OData writes it in a key predicate or a filter: quoted, inner quotes doubled. */
export function keyLiteral(salesOrder: string): string {
  return `'${salesOrder.replaceAll("'", "''")}'`;
}
