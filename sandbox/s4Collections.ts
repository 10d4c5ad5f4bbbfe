// Collection queries of the S/4HANA stand-in, for both families and both versions: `$filter` (s4Filter.ts),
// `$orderby` on several properties, `$top`, `$select` and `$expand` (each family's shape), and server-driven
// paging: with a page size set, an answer holds at most that many entities and links the rest with `__next`
// (V2, an absolute URL) or `@odata.nextLink` (V4, relative to the request), carrying a `$skiptoken`. A `$top`
// bounds the whole chain of pages, as OData says. `$skip` is refused: a client that pages by position misses
// documents that change between its pages. Faults are steered per collection query, so that a test can fail the
// n-th page of a run with a 500 or a 429 with Retry-After.
import { type Answer, type Entity, isAnswer, odataError, type SandboxApi } from './s4Entities.js';
import { compareValues, matches, parseFilter, type RowValue } from './s4Filter.js';
import type { S4Fault } from './s4State.js';

/** One collection query as the stand-in received it. */
export interface CollectionQuery {
  /** 1-based, across families and versions, in arrival order. */
  n: number;
  api: SandboxApi;
  /** The entity set, e.g. A_SalesOrder. */
  set: string;
  /** The query string as received (still encoded). */
  query: string;
}

/** How a test steers collection queries and sees them. */
export interface CollectionControls {
  /** Server-driven paging: at most `rows` entities per answer; undefined (the default): no paging. */
  setPageSize(rows: number | undefined): void;
  /** The fault a collection query meets: `tooMany` answers 429 with the stand-in's Retry-After. */
  setCollectionFault(fault: ((query: CollectionQuery) => S4Fault) | undefined): void;
  collectionLog(): ReadonlyArray<CollectionQuery>;
}

/** A document of a collection: its 7-digit LastChangeDateTime and its entity rendered in full for the version. */
export interface CollectionRow {
  stamp: string | null;
  entity: Entity;
}

export interface CollectionRequest {
  api: SandboxApi;
  set: string;
  /** Where the entity set is, e.g. http://127.0.0.1:1234/sap/opu/odata/sap/API_SALES_ORDER_SRV/A_SalesOrder. */
  setUrl: string;
  rawQuery: string;
  rows: CollectionRow[];
  /** The entity as the query's `$select` and `$expand` ask for it, or the error answer. */
  shape(entity: Entity, query: URLSearchParams): Entity | Answer;
  /** The answer's envelope around the entities of one page. */
  envelope(entities: Entity[], next: string | undefined): Answer;
}

export interface Collections {
  controls: CollectionControls;
  answer(request: CollectionRequest): Answer | 'hang';
}

const FAULTS: Record<Exclude<S4Fault, 'ok' | 'hang'>, [number, string, string]> = {
  unavailable: [503, '/IWFND/CM_BEC/026', 'Service temporarily unavailable'],
  tooMany: [429, '/IWFND/CM_MGW/429', 'Too many requests'],
  error500: [500, '/IWBEP/CM_MGW_RT/000', 'Internal error in the backend'],
};
const ORDER_ITEM = /^([A-Za-z_][A-Za-z0-9_]*)(?: (asc|desc))?$/;

export function createCollections(retryAfterSeconds: () => number | undefined): Collections {
  const log: CollectionQuery[] = [];
  let pageSize: number | undefined;
  let faultFn: ((query: CollectionQuery) => S4Fault) | undefined;

  function answer(request: CollectionRequest): Answer | 'hang' {
    const { api, rawQuery } = request;
    const logged = { n: log.length + 1, api, set: request.set, query: rawQuery };
    log.push(logged);
    const fault = faultFn?.(logged) ?? 'ok';
    if (fault === 'hang') return 'hang';
    if (fault !== 'ok') {
      const [status, code, text] = FAULTS[fault];
      const seconds = retryAfterSeconds();
      const headers: Record<string, string> =
        status === 429 && seconds !== undefined ? { 'retry-after': String(seconds) } : {};
      return { ...odataError(api, status, code, text), headers };
    }

    const query = new URLSearchParams(rawQuery);
    const invalid = (text: string) => odataError(api, 400, '/IWBEP/CM_MGW_RT/011', text);
    if (query.has('$skip')) return invalid('$skip is not supported by this stand-in: page by key');
    const filterText = query.get('$filter');
    const filter = filterText === null ? undefined : parseFilter(filterText, api);
    if (filterText !== null && filter === undefined) return invalid('Invalid filter expression');
    const orderBy = (query.get('$orderby') ?? '')
      .split(',')
      .filter((item) => item.trim() !== '')
      .map((item) => ORDER_ITEM.exec(item.trim()));
    if (orderBy.some((item) => item === null)) return invalid('Invalid $orderby expression');
    const top = query.get('$top');
    if (top !== null && !/^\d+$/.test(top)) return invalid('Invalid $top');
    const skipToken = query.get('$skiptoken');
    if (skipToken !== null && !/^\d+$/.test(skipToken)) return invalid('Invalid $skiptoken');

    const value =
      (row: CollectionRow): RowValue =>
      (property) => {
        if (property === 'LastChangeDateTime') return row.stamp;
        const field = row.entity[property];
        return typeof field === 'string'
          ? field
          : field === null || field === undefined
            ? null
            : String(field);
      };
    let rows = request.rows.filter((row) => filter === undefined || matches(filter, value(row)));
    rows = rows.sort((a, b) => {
      for (const item of orderBy) {
        const [, property = '', direction] = item as RegExpExecArray;
        const [x, y] = [value(a)(property), value(b)(property)];
        // Null sorts first ascending, as OData says.
        const order = x === y ? 0 : x === null ? -1 : y === null ? 1 : compareValues(x, y);
        if (order !== 0) return direction === 'desc' ? -order : order;
      }
      return 0;
    });
    if (top !== null) rows = rows.slice(0, Number(top));

    const from = Number(skipToken ?? 0);
    const to = pageSize === undefined ? rows.length : Math.min(rows.length, from + pageSize);
    const entities: Entity[] = [];
    for (const row of rows.slice(from, to)) {
      const shaped = request.shape(row.entity, query);
      if (isAnswer(shaped)) return shaped;
      entities.push(shaped);
    }
    let next: string | undefined;
    if (to < rows.length) {
      query.set('$skiptoken', String(to));
      // The client's $top stays in the link: it bounds the chain, and the stand-in counts it from the start.
      const search = [...query].map(([key, text]) => `${key}=${encodeURIComponent(text)}`).join('&');
      next = api === 'v2' ? `${request.setUrl}?${search}` : `${request.set}?${search}`;
    }
    return request.envelope(entities, next);
  }

  return {
    controls: {
      setPageSize(rows) {
        pageSize = rows;
      },
      setCollectionFault(fault) {
        faultFn = fault;
      },
      collectionLog: () => log,
    },
    answer,
  };
}

/**
 * Whether a collection read is a query for this engine rather than a batch of key terms, which the stand-in
 * answers as before (s4Reads.ts): a filter of another kind, or any ordering, top or paging option.
 */
export function isCollectionQuery(query: URLSearchParams, keyFilter: boolean): boolean {
  const options = ['$orderby', '$top', '$skiptoken', '$skip'];
  return (query.has('$filter') && !keyFilter) || options.some((option) => query.has(option));
}
