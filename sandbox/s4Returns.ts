/**
 * Stand-in for S/4HANA's customer-return APIs, beside the sales-order ones in s4Server.ts: `API_CUSTOMER_RETURN_SRV`
 * (OData V2), entity set `A_CustomerReturn` with `to_Item`, and `CE_CUSTOMERRETURN_0001` (OData V4), entity set
 * `CustomerReturn` with `_Item`. It answers single reads and collection reads with a `$filter` of key terms
 * joined by `or`, expands the items when asked, and honours `$select` (`to_Item/…` in V2, `_Item($select=…)` in
 * V4): naming a property the entity type lacks fails the request, as on SAP. Faults are those of the sales-order
 * stand-in (S4Fault); error codes other than SY/530 are plausible, not copied from a system. Other collection
 * queries go to s4Collections.ts.
 */
import type { IncomingMessage } from 'node:http';
import { type Collections, isCollectionQuery } from './s4Collections.js';
import { type Answer, type Entity, isAnswer, odataError, type SandboxApi } from './s4Entities.js';
import { timeStamp } from './s4Filter.js';
import { type CustomerReturnState, render, SERVICES, shape } from './s4ReturnEntities.js';
import type { S4Fault } from './s4State.js';

export type { CustomerReturnState, ReturnItemState } from './s4ReturnEntities.js';

export interface LoggedReturnRequest {
  api: SandboxApi;
  collection: boolean;
  customerReturns: string[];
}

export interface ReturnsStandIn {
  setReturn(state: CustomerReturnState): void;
  deleteReturn(customerReturn: string): void;
  /** Returns read (faulted and 404 ones included), in total or for one return. */
  calls(customerReturn?: string): number;
  /** Every request for returns in arrival order. */
  requestLog(): ReadonlyArray<LoggedReturnRequest>;
  /** `callNo` is the 1-based number of this read of this return. */
  setFault(fault: ((customerReturn: string, callNo: number) => S4Fault) | undefined): void;
  /** The answer to a request for customer returns; undefined when the request is for something else. */
  answer(req: IncomingMessage, base: string): Answer | 'hang' | undefined;
}

const KEY_PREDICATE = /^\((?:CustomerReturn=)?'((?:[^']|'')*)'\)$/;
// A filter of key terms joined by `or`; literals double their quotes.
const KEY_TERM = "CustomerReturn eq '(?:[^']|'')*'";
const FILTER = new RegExp(`^${KEY_TERM}(?: or ${KEY_TERM})*$`);
const FILTER_KEYS = /CustomerReturn eq '((?:[^']|'')*)'/g;
const FAULTS: Record<Exclude<S4Fault, 'ok' | 'hang'>, [number, string, string]> = {
  unavailable: [503, '/IWFND/CM_BEC/026', 'Service temporarily unavailable'],
  tooMany: [429, '/IWFND/CM_MGW/429', 'Too many requests'],
  error500: [500, '/IWBEP/CM_MGW_RT/000', 'Internal error in the backend'],
};

/** `collections` answers the queries other than a batch of key terms (s4Collections.ts). */
export function createReturnsStandIn(collections: Collections): ReturnsStandIn {
  const returns = new Map<string, { state: CustomerReturnState; createdMs: number }>();
  const counts = new Map<string, number>();
  const log: LoggedReturnRequest[] = [];
  let faultFn: ((customerReturn: string, callNo: number) => S4Fault) | undefined;

  function answer(req: IncomingMessage, base: string): Answer | 'hang' | undefined {
    const [rawPath = '', rawQuery = ''] = (req.url ?? '').split('?', 2);
    const api = (['v2', 'v4'] as const).find((version) => rawPath.startsWith(SERVICES[version].path));
    if (api === undefined) return undefined;
    const service = SERVICES[api];
    const set = `${service.path}/${service.set}`;
    // The reader only reads: anything else is a test's mistake, answered as SAP would.
    if (req.method !== 'GET')
      return odataError(api, 405, '/IWFND/CM_MGW/405', `Method ${req.method} not allowed`);
    const path = decoded(rawPath);
    if (path === undefined) return odataError(api, 400, '/IWFND/CM_MGW/004', 'Malformed URI');
    const query = new URLSearchParams(rawQuery);
    let keys: string[];
    const collection = path === set;
    if (collection) {
      const filter = query.get('$filter') ?? '';
      if (isCollectionQuery(query, FILTER.test(filter))) {
        const context = `${base}${service.path}/$metadata#${service.set}`;
        return collections.answer({
          api,
          set: service.set,
          setUrl: `${base}${set}`,
          rawQuery,
          rows: [...returns.values()].map(({ state, createdMs }) => ({
            stamp: timeStamp(state.lastChangeDateTime) ?? null,
            entity: render(api, state, createdMs, base),
          })),
          shape: (entity, query) => shape(api, entity, query),
          envelope: (entities, next) =>
            api === 'v2'
              ? { status: 200, body: { d: { results: entities, ...(next && { __next: next }) } } }
              : {
                  status: 200,
                  body: {
                    '@odata.context': context,
                    value: entities,
                    ...(next && { '@odata.nextLink': next }),
                  },
                  headers: { 'odata-version': '4.0' },
                },
        });
      }
      if (!FILTER.test(filter))
        return odataError(api, 400, '/IWBEP/CM_MGW_RT/011', 'Invalid filter expression');
      keys = [...filter.matchAll(FILTER_KEYS)].map((match) => unquote(match[1]));
    } else {
      const match = path.startsWith(set) ? KEY_PREDICATE.exec(path.slice(set.length)) : null;
      if (!match) return odataError(api, 404, '/IWFND/MED/170', `Resource not found for segment '${path}'`);
      keys = [unquote(match[1])];
    }
    log.push({ api, collection, customerReturns: keys });
    const faults = keys.map((key) => {
      const callNo = (counts.get(key) ?? 0) + 1;
      counts.set(key, callNo);
      return faultFn?.(key, callNo) ?? 'ok';
    });
    const fault = faults.find((f) => f !== 'ok') ?? 'ok';
    if (fault === 'hang') return 'hang';
    if (fault !== 'ok') {
      const [status, code, text] = FAULTS[fault];
      const headers: Record<string, string> = status === 429 ? { 'retry-after': '1' } : {};
      return { ...odataError(api, status, code, text), headers };
    }

    const entities: Entity[] = [];
    for (const key of new Set(keys)) {
      const found = returns.get(key);
      if (found === undefined) continue;
      const shaped = shape(api, render(api, found.state, found.createdMs, base), query);
      if (isAnswer(shaped)) return shaped;
      entities.push(shaped);
    }
    const context = `${base}${service.path}/$metadata#${service.set}`;
    if (collection) {
      return api === 'v2'
        ? { status: 200, body: { d: { results: entities } } }
        : {
            status: 200,
            body: { '@odata.context': context, value: entities },
            headers: { 'odata-version': '4.0' },
          };
    }
    const [entity] = entities;
    if (entity === undefined)
      return odataError(api, 404, 'SY/530', `Resource not found for segment '${service.type}'`);
    return api === 'v2'
      ? { status: 200, body: { d: entity } }
      : {
          status: 200,
          body: { '@odata.context': `${context}/$entity`, ...entity },
          headers: { 'odata-version': '4.0' },
        };
  }

  return {
    setReturn(state) {
      if (Number.isNaN(Date.parse(state.lastChangeDateTime))) {
        throw new Error(`setReturn: lastChangeDateTime '${state.lastChangeDateTime}' is not an ISO instant`);
      }
      const createdMs = returns.get(state.customerReturn)?.createdMs ?? Date.parse(state.lastChangeDateTime);
      returns.set(state.customerReturn, { state: structuredClone(state), createdMs });
    },
    deleteReturn(customerReturn) {
      returns.delete(customerReturn);
    },
    calls: (customerReturn) =>
      customerReturn === undefined
        ? [...counts.values()].reduce((sum, n) => sum + n, 0)
        : (counts.get(customerReturn) ?? 0),
    requestLog: () => log,
    setFault(fault) {
      faultFn = fault;
    },
    answer,
  };
}

function decoded(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

function unquote(literal: string | undefined): string {
  return (literal ?? '').replaceAll("''", "'");
}
