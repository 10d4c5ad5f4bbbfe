// What every entity mapping shares, whatever the family: how an API version writes times, the check that an
// envelope is an object, and the failure kind of an answer that is not what was asked for.
import { TransientError } from '../errors.js';

/**
 * S/4HANA answered something that is not the entity asked for. Transient by statement: it is a gateway,
 * proxy or release to look at, and the message waits (bounded by the delivery limit) instead of being
 * dead-lettered for a problem that is not its own.
 */
export class UnexpectedResponseError extends TransientError {
  override name = 'UnexpectedResponseError';
}

/** How one API version writes the two kinds of time the mappings read. */
export interface TimeFormat {
  /** An Edm date as YYYY-MM-DD, or null. */
  date(value: unknown): string | null;
  /** An Edm.DateTimeOffset, or null. */
  dateTime(value: unknown): Date | null;
}

/** An object, or the reason it is not one: envelopes are checked before anything is read from them. */
export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UnexpectedResponseError(`response has no ${what}`);
  }
  return value as Record<string, unknown>;
}
