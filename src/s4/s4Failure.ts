// The S/4HANA client states the kind of each of its failures (errors.ts's classes): the status it carries is
// for logs and for the throttle, never what decides the kind. So a redirect stays transient even with its
// status attached, and a future field cannot turn it into a dead letter.
import { classify, type FailureKind, httpStatusKind, PermanentError, TransientError } from '../errors.js';

export interface FailureDetail {
  /** The HTTP status S/4HANA answered, if it answered. */
  status?: number;
  /** What a 429 or 503 asked for with `Retry-After`, in milliseconds. */
  retryAfterMs?: number;
  cause?: unknown;
}

export type S4Failure = (TransientError | PermanentError) & Omit<FailureDetail, 'cause'>;

export function s4Failure(kind: FailureKind, message: string, detail: FailureDetail = {}): S4Failure {
  const { cause, ...fields } = detail;
  const options = cause === undefined ? undefined : { cause };
  const err =
    kind === 'transient' ? new TransientError(message, options) : new PermanentError(message, options);
  return Object.assign(err, fields);
}

/** A non-2xx, non-redirect answer: its kind follows the one HTTP status table in errors.ts. */
export function httpFailure(status: number, text: string, retryAfterMs?: number): S4Failure {
  const message = `S/4HANA answered HTTP ${status}${text === '' ? '' : `: ${text.slice(0, 200)}`}`;
  return s4Failure(httpStatusKind(status), message, { status, retryAfterMs });
}

/** A failure below HTTP (socket, timeout, the SDK): its kind from the table for foreign errors, kept as cause. */
export function wrapFailure(err: unknown, what: string): S4Failure {
  if (err instanceof TransientError || err instanceof PermanentError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const detail = typeof code === 'string' ? ` (${code})` : '';
  return s4Failure(classify(err), `${what} failed${detail}: ${(err as Error)?.message ?? String(err)}`, {
    cause: err,
  });
}

const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 10.2.3), in milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only the IMF-fixdate servers must send: Date.parse alone would take "-1" for a year.
  if (!HTTP_DATE.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The fields a failure of this client carries, read safely from anything thrown. */
export function failureDetail(err: unknown): Omit<FailureDetail, 'cause'> {
  const { status, retryAfterMs } = (err ?? {}) as FailureDetail;
  return { status, retryAfterMs };
}
