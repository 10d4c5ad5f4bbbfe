import { scrubAddresses } from './telemetry/scrubAddresses.js';

// Every failure is one of two kinds, decided here and nowhere else:
// - transient: the world may look different in a moment (retry with backoff, then release the message);
// - permanent: retrying cannot help (the message goes to the dead-letter queue with its reason).
// An error we cannot classify is treated as transient; the delivery limit keeps it from looping forever.
//
// Code of this service that knows the kind of its own failure says so: it throws one of the two classes below,
// with the underlying error as `cause`. The tables further down are for foreign errors only (pg, sockets, the
// SAP Cloud SDK), whose kind can only be read from the fields those libraries set. A stated kind always wins
// over the fields, so a status added to an error for its log line cannot change its fate.

export type FailureKind = 'transient' | 'permanent';

/** A failure that may pass: retried with backoff, then the message is released. */
export class TransientError extends Error {
  override name = 'TransientError';
}

/** A failure that will repeat on every try: the message is dead-lettered with the reason. */
export class PermanentError extends Error {
  override name = 'PermanentError';
}

// PostgreSQL SQLSTATEs worth another try (https://www.postgresql.org/docs/current/errcodes-appendix.html).
// Class 08 (connection exception) is matched by prefix below.
const RETRYABLE_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57P01', // admin_shutdown: the server is restarting
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the server is starting up
  '53300', // too_many_connections
]);

// Socket and client error codes: the peer or the network is (for now) unreachable or too slow.
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED', // axios: request timeout
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_CANCELED',
  'ERR_NETWORK',
]);

// HTTP statuses from S/4HANA. 401/403 are here on purpose: a broken destination or an expired technical
// user is an operator's problem, not the message's; releasing keeps the message until it is fixed.
const RETRYABLE_HTTP_STATUSES = new Set([401, 403, 408, 409, 425, 429, 500, 502, 503, 504]);

const MAX_CAUSE_DEPTH = 8;

interface ErrorFields {
  code?: unknown;
  status?: unknown;
  response?: { status?: unknown };
  cause?: unknown;
}

/** Decides the kind of any thrown value: the stated kind if there is one, else from the foreign error's fields. */
export function classify(err: unknown, depth = 0): FailureKind {
  if (err instanceof TransientError) return 'transient';
  if (err instanceof PermanentError) return 'permanent';
  if (typeof err !== 'object' || err === null) return 'transient';
  const { code, status, response, cause } = err as ErrorFields;
  if (typeof code === 'string') {
    if (RETRYABLE_SQLSTATES.has(code) || code.startsWith('08')) return 'transient';
    // Class 22, data exception: the same data fails the same way on every try.
    if (/^22[0-9A-Z]{3}$/.test(code)) return 'permanent';
    if (RETRYABLE_NETWORK_CODES.has(code)) return 'transient';
  }
  const httpStatus = response?.status ?? status;
  if (typeof httpStatus === 'number') return httpStatusKind(httpStatus);
  // A chain of causes may loop back on itself; a few links are all any client wraps.
  if (cause !== undefined && depth < MAX_CAUSE_DEPTH) return classify(cause, depth + 1);
  return 'transient';
}

/** The kind of an HTTP error status: what S/4HANA's client states for its answers, and classify reads on others. */
export function httpStatusKind(status: number): FailureKind {
  return RETRYABLE_HTTP_STATUSES.has(status) || status >= 500 ? 'transient' : 'permanent';
}

/**
 * The reason text stored for a failure (dead letters, the last error of a delivery, a parked mail): the error's
 * name and message without addresses (the admin API shows reasons to a Viewer), at most 500 characters, so that a
 * huge message cannot bloat a row or a log line.
 */
export function failureReason(err: unknown): string {
  return scrubAddresses(err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, 500);
}
