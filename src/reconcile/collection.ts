// What a family gives reconciliation about its documents: the entity set it reads for events (its ODataService:
// the collection path, the key property, the version's envelope and the `$select`/`$expand` every read carries),
// the filter of the documents that are still open, and the mapping its event reads use. A row reconciliation
// reads is mapped exactly as an event's read of the same document would be.
import type { ODataService } from '../s4/odataService.js';

/** A family's name (src/families/): shared code names none; a family without a collection is not reconciled. */
export type ReconcileFamily = string;

export interface ReconcileCollection<T> {
  family: ReconcileFamily;
  /** The service event reads use; its `$select` must name the key property and LastChangeDateTime. */
  service: ODataService;
  /** The documents a sweep re-reads, as a `$filter` expression on the entity set (the family's open ones). */
  openFilter: string;
  /** The family's mapping of one entity read for `key` (the one event reads use). */
  map(entity: Record<string, unknown>, key: string): T;
}

/** Why the collection cannot be paged by key and stamp, or undefined when it can. */
export function collectionProblem(collection: ReconcileCollection<unknown>): string | undefined {
  const select = collection.service.query.$select;
  if (select === undefined) return undefined;
  const names = select.split(',');
  const missing = [collection.service.keyProperty, 'LastChangeDateTime'].filter(
    (name) => !names.includes(name),
  );
  return missing.length === 0
    ? undefined
    : `${collection.family}: $select lacks ${missing.join(' and ')}, which paging by key needs`;
}
