// Reads a family's collection in pages by key, never by position: a delta window (`LastChangeDateTime ge
// <from>`, ordered by LastChangeDateTime and the key) or every open document (ordered by the key). Each page is
// one `$top` request, with every `__next` / `@odata.nextLink` the server sends followed to its end; the next page
// starts after the last row read, `(LastChangeDateTime gt T) or (LastChangeDateTime eq T and Key gt 'K')` with T
// at 7 digits, so rows that share one stamp, however many, are read once each and never loop. Reading stops at
// an empty page, not at a short one: a server that caps `$top` without a next link loses nothing. A page is read
// only when the caller asks for it, so a caller that commits each page before the next never has more than one
// page read and not applied.
import { keyFilter, MAX_URL_LENGTH } from '../s4/keyFilter.js';
import { UnexpectedResponseError } from '../s4/odataEntity.js';
import { keyLiteral } from '../s4/odataService.js';
import type { ReconcileCollection } from './collection.js';
import type { ReconcileRequests } from './reconcileRequests.js';
import { type Stamp, stampLiteral, stampOf } from './stamp.js';

export interface ReadRow<T> {
  key: string;
  /** LastChangeDateTime at 7 digits; null only in a sweep, for a document S/4HANA gives none. */
  stamp: Stamp | null;
  /** The document as the family's mapping reads it. */
  value: T;
}

export interface ReadPage<T> {
  rows: Array<ReadRow<T>>;
  /** HTTP requests this page took. */
  requests: number;
}

export interface CollectionReader {
  /** The documents changed at or after `from`, page by page. */
  window<T>(collection: ReconcileCollection<T>, from: Stamp): AsyncGenerator<ReadPage<T>>;
  /** Every open document (the family's open filter), page by page. */
  open<T>(collection: ReconcileCollection<T>): AsyncGenerator<ReadPage<T>>;
  /** The documents with these keys (a filter of key terms), and the keys S/4HANA no longer has. */
  keys<T>(
    collection: ReconcileCollection<T>,
    keys: readonly string[],
  ): Promise<ReadPage<T> & { missing: string[] }>;
}

export function createCollectionReader(requests: ReconcileRequests, pageSize: number): CollectionReader {
  /** One `$top` request and the next links after it: the rows in the order S/4HANA gave them. */
  async function page<T>(
    collection: ReconcileCollection<T>,
    query: Record<string, string>,
  ): Promise<ReadPage<T>> {
    const { service } = collection;
    let count = 0;
    const counted = () => {
      count += 1;
    };
    const rows: Array<ReadRow<T>> = [];
    let answered = await requests.get(
      { path: service.collectionPath, query: { ...service.query, ...query } },
      service.errorMessage,
      counted,
    );
    for (;;) {
      const { entities, next } = entitiesOf(collection, answered.body);
      for (const entity of entities) rows.push(rowOf(collection, entity));
      if (next === undefined) return { rows, requests: count };
      answered = await requests.get({ link: next, from: answered.url }, service.errorMessage, counted);
    }
  }

  /** Pages after the cursor the last row of each page sets, until an empty page. */
  async function* pages<T>(
    collection: ReconcileCollection<T>,
    filter: (after: ReadRow<T> | undefined) => string,
    orderby: string,
    byStamp: boolean,
  ): AsyncGenerator<ReadPage<T>> {
    let after: ReadRow<T> | undefined;
    let previous = new Set<string>();
    for (;;) {
      const read = await page(collection, {
        $filter: filter(after),
        $orderby: orderby,
        $top: String(pageSize),
      });
      if (byStamp) inStampOrder(collection, read.rows, after?.stamp ?? null);
      const ids = new Set(read.rows.map((row) => `${row.stamp}|${row.key}`));
      // A server that ignored the filter would hand the same rows back for ever.
      if ([...ids].some((id) => previous.has(id)))
        throw new UnexpectedResponseError(
          `${collection.family}: S/4HANA ignored the key filter of the next page`,
        );
      yield read;
      const last = read.rows.at(-1);
      if (last === undefined) return;
      after = last;
      previous = ids;
    }
  }

  return {
    window(collection, from) {
      const { keyProperty, version } = collection.service;
      return pages(
        collection,
        (after) => {
          if (after === undefined) return `LastChangeDateTime ge ${stampLiteral(version, from)}`;
          const at = stampLiteral(version, after.stamp as Stamp);
          return `(LastChangeDateTime gt ${at}) or (LastChangeDateTime eq ${at} and ${keyProperty} gt ${keyLiteral(after.key)})`;
        },
        `LastChangeDateTime asc,${keyProperty} asc`,
        true,
      );
    },
    open(collection) {
      const { keyProperty } = collection.service;
      return pages(
        collection,
        (after) =>
          after === undefined
            ? collection.openFilter
            : `(${collection.openFilter}) and ${keyProperty} gt ${keyLiteral(after.key)}`,
        `${keyProperty} asc`,
        false,
      );
    },
    async keys<T>(collection: ReconcileCollection<T>, wanted: readonly string[]) {
      const { keyProperty } = collection.service;
      const rows: Array<ReadRow<T>> = [];
      let requestsSent = 0;
      let left = [...new Set(wanted)];
      while (left.length > 0) {
        // The URL's room is that of event reads' key filters; the path and options take their share.
        const { filter, keys } = keyFilter(keyProperty, left, pageSize, MAX_URL_LENGTH - 1024);
        if (keys.length === 0)
          throw new UnexpectedResponseError(`${collection.family}: key ${left[0]} is too long`);
        const read = await page(collection, { $filter: filter });
        rows.push(...read.rows);
        requestsSent += read.requests;
        left = left.slice(keys.length);
      }
      const found = new Set(rows.map((row) => row.key));
      return { rows, requests: requestsSent, missing: wanted.filter((key) => !found.has(key)) };
    },
  };
}

function entitiesOf(
  collection: ReconcileCollection<unknown>,
  body: unknown,
): { entities: Array<Record<string, unknown>>; next: string | undefined } {
  const { entities } = collection.service.collection(body);
  const envelope = body as { d?: { __next?: unknown }; '@odata.nextLink'?: unknown };
  const next = collection.service.version === 'v2' ? envelope.d?.__next : envelope['@odata.nextLink'];
  if (next !== undefined && typeof next !== 'string')
    throw new UnexpectedResponseError(`${collection.family}: the next link is not a text`);
  return { entities, next };
}

function rowOf<T>(collection: ReconcileCollection<T>, entity: Record<string, unknown>): ReadRow<T> {
  const key = entity[collection.service.keyProperty];
  if (typeof key !== 'string' || key === '')
    throw new UnexpectedResponseError(
      `${collection.family}: a document without its ${collection.service.keyProperty}`,
    );
  return { key, stamp: stampOf(collection.service.version, entity), value: collection.map(entity, key) };
}

/** The cursor of the next page is the last row: rows out of stamp order, or without one, would skip documents. */
function inStampOrder(
  collection: ReconcileCollection<unknown>,
  rows: ReadonlyArray<ReadRow<unknown>>,
  from: Stamp | null,
) {
  let previous = from;
  for (const row of rows) {
    if (row.stamp === null || (previous !== null && row.stamp < previous)) {
      throw new UnexpectedResponseError(
        `${collection.family}: S/4HANA answered ${row.key} out of LastChangeDateTime order (${row.stamp ?? 'none'})`,
      );
    }
    previous = row.stamp;
  }
}
