// S/4HANA's own time: LastChangeDateTime at the 7 fractional digits it stores (Edm.DateTimeOffset Precision 7),
// written as one fixed-width UTC text, so that text order is time order and a stamp compares, pages and is kept
// exactly as S/4HANA wrote it. It is taken from V4's value or from V2's ETag, never from V2's JSON value: V2 cuts
// it to milliseconds, and a cursor in milliseconds misses or loops on the rows that share one (docs/reconciliation.md).
import { UnexpectedResponseError } from '../s4/odataEntity.js';
import type { ApiVersion } from '../s4/odataService.js';

/** e.g. 2016-09-02T06:15:47.1257050Z */
export type Stamp = string;

const TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,7}))?(Z|[+-]\d{2}:\d{2})$/;
const V2_ETAG = /^W\/"datetimeoffset'([^']+)'"$/;

/** A time as S/4HANA writes it (up to 7 digits, any offset) as a stamp; undefined if it is not one. */
export function parseStamp(text: string): Stamp | undefined {
  const match = TIME.exec(text);
  if (match === null) return undefined;
  const [, head, fraction = '', zone] = match;
  const ms = Date.parse(`${head}${zone}`);
  if (Number.isNaN(ms)) return undefined;
  return `${new Date(ms).toISOString().slice(0, 19)}.${fraction.padEnd(7, '0')}Z`;
}

/** The stamp of one entity of a collection answer; null when S/4HANA has none (V4's is nullable). */
export function stampOf(version: ApiVersion, entity: Record<string, unknown>): Stamp | null {
  if (version === 'v4') {
    const value = entity.LastChangeDateTime;
    if (value === null || value === undefined) return null;
    const stamp = typeof value === 'string' ? parseStamp(value) : undefined;
    if (stamp === undefined)
      throw new UnexpectedResponseError(`not a LastChangeDateTime: ${JSON.stringify(value)}`);
    return stamp;
  }
  // LastChangeDateTime is the entity's only concurrency token, so V2 writes it, URL-encoded, as the ETag.
  const etag = (entity.__metadata as { etag?: unknown } | undefined)?.etag;
  if (etag === undefined || etag === null) return null;
  const match = typeof etag === 'string' ? V2_ETAG.exec(etag) : null;
  const stamp = match === null ? undefined : parseStamp(decodeURIComponent(match[1] as string));
  if (stamp === undefined)
    throw new UnexpectedResponseError(`not a LastChangeDateTime ETag: ${JSON.stringify(etag)}`);
  return stamp;
}

/** This service's time as a stamp: the one place its clock meets S/4HANA's (the settle bound). */
export function stampAt(ms: number): Stamp {
  return new Date(ms).toISOString().replace('Z', '0000Z');
}

/** `stamp` moved back by `ms` milliseconds, its digits below the millisecond kept. */
export function stampMinus(stamp: Stamp, ms: number): Stamp {
  const whole = Date.parse(`${stamp.slice(0, 23)}Z`) - ms;
  return `${new Date(whole).toISOString().slice(0, 23)}${stamp.slice(23)}`;
}

/** Milliseconds since the epoch, the digits below them dropped: for lags and the age of a mark. */
export function stampMs(stamp: Stamp): number {
  return Date.parse(`${stamp.slice(0, 23)}Z`);
}

/** The filter literal: `datetimeoffset'…'` in V2, the bare time in V4. */
export function stampLiteral(version: ApiVersion, stamp: Stamp): string {
  return version === 'v2' ? `datetimeoffset'${stamp}'` : stamp;
}
