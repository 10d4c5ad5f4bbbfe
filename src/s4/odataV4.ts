// OData V4 as S/4HANA's released V4 APIs write it: the entity at the top level with `@odata.*` annotations,
// collections as `{"value": […]}`, Edm.Date as "2026-05-12", Edm.DateTimeOffset with up to 7 fractional digits,
// error messages as plain strings (docs/s4hana.md, V4 wire format). The ETag is not used: states are ordered by
// LastChangeDateTime.
import { asObject, UnexpectedResponseError } from './odataEntity.js';
import type { ODataEnvelope } from './odataService.js';

const EDM_DATE = /^\d{4}-\d{2}-\d{2}$/;
const EDM_DATE_TIME_OFFSET =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,12}))?(Z|[+-]\d{2}:\d{2})$/;

export function parseEdmDate(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' && EDM_DATE.test(value) && !Number.isNaN(Date.parse(value))) return value;
  throw new UnexpectedResponseError(`not an Edm.Date: ${JSON.stringify(value)}`);
}

/** Milliseconds are kept; digits beyond them (V4 sends 7) are cut, never rounded up into the next state. */
export function parseEdmDateTimeOffset(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  const match = typeof value === 'string' ? EDM_DATE_TIME_OFFSET.exec(value) : null;
  const [, head, fraction = '', zone] = match ?? [];
  const ms =
    match === null ? Number.NaN : Date.parse(`${head}.${fraction.padEnd(3, '0').slice(0, 3)}${zone}`);
  if (Number.isNaN(ms))
    throw new UnexpectedResponseError(`not an Edm.DateTimeOffset: ${JSON.stringify(value)}`);
  return new Date(ms);
}

/** How every V4 service wraps its answers, whatever entity set is read. */
export const v4Envelope: ODataEnvelope = {
  version: 'v4',
  entity: (body) => asObject(body, 'JSON object: not an OData V4 entity'),
  collection(body) {
    const page = asObject(body, 'JSON object: not an OData V4 collection');
    if (!Array.isArray(page.value)) throw new UnexpectedResponseError('response has no "value" array');
    return {
      entities: page.value.map((entity) => asObject(entity, 'entity object in "value"')),
      complete: page['@odata.nextLink'] === undefined,
    };
  },
  time: { date: parseEdmDate, dateTime: parseEdmDateTimeOffset },
  errorMessage(body) {
    const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
    return typeof message === 'string' ? message : '';
  },
};
