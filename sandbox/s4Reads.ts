// What the S/4HANA stand-in answers to one OData request: the entity set and key or `$filter` it names, the
// faults the state asks for, and the orders rendered in the request's API version.
import type { IncomingMessage } from 'node:http';
import { type CollectionRequest, type Collections, isCollectionQuery } from './s4Collections.js';
import {
  type Answer,
  collectionAnswer,
  ENTITY_SETS,
  type Entity,
  entityAnswer,
  isAnswer,
  odataError,
  renderV2,
  renderV4,
  type SandboxApi,
  SERVICE_PATHS,
  select,
} from './s4Entities.js';
import { timeStamp } from './s4Filter.js';
import type { S4Fault, S4State } from './s4State.js';

/** How the answer to one request is held back: by latency, and by the gates of scripted reads. */
export interface Delay {
  latencyMs?: number;
  until: Array<Promise<unknown>>;
}

export interface ReadContext {
  state: S4State;
  /** Where the stand-in listens: the base of V2's `__metadata` and V4's `@odata.context`. */
  url: string;
  omitOverallDeliveryStatus: boolean;
  /** Queries of the entity set other than a batch of key terms (s4Collections.ts). */
  collections: Collections;
}

// Both key forms are valid: A_SalesOrder('1') and A_SalesOrder(SalesOrder='1'); '' is an escaped quote.
const KEY_PREDICATE = /^\((?:SalesOrder=)?'((?:[^']|'')*)'\)$/;
const FILTER_TERM = /\s*SalesOrder eq '((?:[^']|'')*)'\s*/y;

/** The answer, or 'hang' for a request never to be answered; `delay` collects what holds the answer back. */
export function answerRead(req: IncomingMessage, context: ReadContext, delay: Delay): Answer | 'hang' {
  const { state, url } = context;
  const [rawPath = '', rawQuery = ''] = (req.url ?? '').split('?', 2);
  const api: SandboxApi = rawPath.startsWith(SERVICE_PATHS.v4) ? 'v4' : 'v2';
  if (req.method !== 'GET') {
    return {
      ...odataError(api, 405, '/IWFND/CM_MGW/405', `Method ${req.method} not allowed`),
      headers: { allow: 'GET' },
    };
  }
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return odataError(api, 400, '/IWFND/CM_MGW/004', 'Malformed URI');
  }
  const query = new URLSearchParams(rawQuery);
  const set = ENTITY_SETS[api];
  let salesOrders: string[];
  let collection: boolean;
  if (path === set) {
    collection = true;
    const keys = parseFilter(query.get('$filter'));
    if (!state.refusingFilters() && isCollectionQuery(query, keys !== undefined)) {
      return context.collections.answer(collectionRequest(api, rawQuery, context));
    }
    if (keys === undefined || state.refusingFilters()) {
      state.log({ at: Date.now(), api, collection, salesOrders: keys ?? [], refused: true });
      return odataError(api, 400, '/IWBEP/CM_MGW_RT/011', 'Invalid filter expression');
    }
    salesOrders = keys;
  } else if (path.startsWith(set)) {
    collection = false;
    const match = KEY_PREDICATE.exec(path.slice(set.length));
    // A_SalesOrder(…) with a lone quote means the client forgot to double it.
    if (!match) return odataError(api, 400, '/IWBEP/CM_MGW_RT/004', 'Invalid key predicate');
    salesOrders = [(match[1] ?? '').replaceAll("''", "'")];
  } else {
    const segment = path.split('/').pop() ?? '';
    return odataError(api, 404, '/IWFND/MED/170', `Resource not found for segment '${segment}'`);
  }

  state.log({ at: Date.now(), api, collection, salesOrders, refused: false });
  let fault: S4Fault = 'ok';
  for (const salesOrder of salesOrders) {
    const { callNo, entry } = state.read(salesOrder);
    if (entry?.latencyMs !== undefined) delay.latencyMs = Math.max(delay.latencyMs ?? 0, entry.latencyMs);
    if (entry?.until !== undefined) delay.until.push(entry.until);
    const own = entry?.fault ?? state.fault(salesOrder, callNo);
    if (fault === 'ok') fault = own; // the first order with a fault decides the whole request
  }
  switch (fault) {
    case 'hang':
      return 'hang';
    case 'unavailable':
      return odataError(api, 503, '/IWFND/CM_BEC/026', 'Service temporarily unavailable');
    case 'tooMany': {
      const retryAfterSeconds = state.retryAfterSeconds();
      return {
        ...odataError(api, 429, '/IWFND/CM_MGW/429', 'Too many requests'),
        headers: retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
      };
    }
    case 'error500':
      return odataError(api, 500, '/IWBEP/CM_MGW_RT/000', 'Internal error in the backend');
    case 'ok':
      break;
  }

  const $select = query.get('$select');
  const entities: Entity[] = [];
  for (const salesOrder of collection ? [...new Set(salesOrders)] : salesOrders) {
    const order = state.order(salesOrder);
    if (!order) continue;
    const entity =
      api === 'v2'
        ? renderV2(order.state, order.createdMs, url, context.omitOverallDeliveryStatus)
        : renderV4(order.state, order.createdMs);
    const selected = select(api, entity, $select);
    if (isAnswer(selected)) return selected;
    entities.push(selected);
  }
  if (collection) return collectionAnswer(api, entities, url);
  const [entity] = entities;
  const type = api === 'v2' ? 'A_SalesOrderType' : 'SalesOrder';
  if (!entity) return odataError(api, 404, 'SY/530', `Resource not found for segment '${type}'`);
  return entityAnswer(api, entity, url);
}

/** The orders as a collection query sees them; sales orders have no items to expand. */
function collectionRequest(api: SandboxApi, rawQuery: string, context: ReadContext): CollectionRequest {
  const { state, url } = context;
  return {
    api,
    set: api === 'v2' ? 'A_SalesOrder' : 'SalesOrder',
    setUrl: `${url}${ENTITY_SETS[api]}`,
    rawQuery,
    rows: state.all().map((order) => ({
      stamp: timeStamp(order.state.lastChangeDateTime) ?? null,
      entity:
        api === 'v2'
          ? renderV2(order.state, order.createdMs, url, context.omitOverallDeliveryStatus)
          : renderV4(order.state, order.createdMs),
    })),
    shape: (entity, query) =>
      query.has('$expand')
        ? odataError(api, 400, '/IWBEP/CM_MGW_RT/005', `Invalid $expand '${query.get('$expand')}'`)
        : select(api, entity, query.get('$select')),
    envelope(entities, next) {
      const answer = collectionAnswer(api, entities, url);
      const body = answer.body as Record<string, unknown> & { d?: Record<string, unknown> };
      if (next === undefined) return answer;
      if (api === 'v2') return { ...answer, body: { d: { ...body.d, __next: next } } };
      return { ...answer, body: { ...body, '@odata.nextLink': next } };
    },
  };
}

/** The keys of `SalesOrder eq '…'` terms joined by `or`, or undefined for any other filter. */
function parseFilter(filter: string | null): string[] | undefined {
  if (filter === null) return undefined;
  const keys: string[] = [];
  let at = 0;
  for (;;) {
    FILTER_TERM.lastIndex = at;
    const match = FILTER_TERM.exec(filter);
    if (!match) return undefined;
    keys.push((match[1] ?? '').replaceAll("''", "'"));
    at = FILTER_TERM.lastIndex;
    if (at === filter.length) return keys;
    if (!filter.startsWith('or ', at)) return undefined;
    at += 3;
  }
}
