// OData V2 as S/4HANA's released V2 APIs write it: `{"d": …}`, `{"d": {"results": […]}}`, dates as
// "/Date(ms)/", error messages as `{lang, value}` (docs/s4hana.md, V2 wire format).

import { asObject, UnexpectedResponseError } from './odataEntity.js';
import type { ODataEnvelope } from './odataService.js';

// "/Date(1747008000000)/" or "/Date(1747050000000+0000)/". The number is UTC milliseconds; the optional
// offset (minutes) only says where it was recorded, so it is ignored.
const ODATA_DATE = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/;

export function parseODataDate(value: unknown): Date | null {
  if (value === null || value === undefined || value === '') return null;
  const match = typeof value === 'string' ? ODATA_DATE.exec(value) : null;
  if (match === null) throw new UnexpectedResponseError(`not an OData V2 date: ${JSON.stringify(value)}`);
  return new Date(Number(match[1]));
}

/** How every V2 service wraps its answers, whatever entity set is read. */
export const v2Envelope: ODataEnvelope = {
  version: 'v2',
  entity: (body) => asObject(asObject(body, 'JSON object').d, '"d" object: not an OData V2 entity'),
  collection(body) {
    const d = asObject(asObject(body, 'JSON object').d, '"d" object: not an OData V2 collection');
    if (!Array.isArray(d.results)) throw new UnexpectedResponseError('response has no "d.results" array');
    return {
      entities: d.results.map((entity) => asObject(entity, 'entity object in "d.results"')),
      complete: d.__next === undefined,
    };
  },
  time: {
    date: (value) => parseODataDate(value)?.toISOString().slice(0, 10) ?? null,
    dateTime: parseODataDate,
  },
  errorMessage(body) {
    const value = (body as { error?: { message?: { value?: unknown } } } | null)?.error?.message?.value;
    return typeof value === 'string' ? value : '';
  },
};
