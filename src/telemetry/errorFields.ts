// What a log line carries of an error, chosen field by field. Outbound clients hang personal data and
// credentials on their errors: SMTP errors the refused addresses (`rejected`) and the
// relay's reply (`response`), HTTP clients the request's headers and the answer's body, pg the row's values
// (`detail`). A library's whole error object never reaches a log line; this module picks what may.
import { classify, type FailureKind } from '../errors.js';
import { scrubAddresses } from './scrubAddresses.js';

export interface ErrorFields {
  /** The error's class name (`Error`, `DatabaseError`, `AxiosError`…). */
  type: string;
  kind: FailureKind;
  /** The message with every address removed. */
  message: string;
  /** A library's code: a SQLSTATE, a socket code, the SMTP client's `EENVELOPE`… */
  code?: string;
  /** The SMTP reply code of the relay's refusal. */
  responseCode?: number;
  /** The SMTP enhanced status code (RFC 3463) of that reply, e.g. 5.1.1. */
  enhancedStatus?: string;
  /** The SMTP command the relay refused (`RCPT TO`, `DATA`…). */
  command?: string;
  /** How many recipients the relay refused. */
  refused?: number;
  /** The HTTP status of an answer. */
  status?: number;
  /** PostgreSQL names the constraint and table, never the values. */
  constraint?: string;
  table?: string;
  /** The call stack without its first line, which repeats the message. */
  stack?: string;
  cause?: ErrorFields;
}

const ENHANCED_STATUS = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/;
// A cause's cause's cause is enough to see what went wrong, and keeps a line short.
const MAX_CAUSES = 3;

interface ForeignFields {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  responseCode?: unknown;
  response?: unknown;
  command?: unknown;
  rejected?: unknown;
  status?: unknown;
  constraint?: unknown;
  table?: unknown;
  stack?: unknown;
  cause?: unknown;
}

/** The allowed fields of any thrown value; pino's serializer for `err`, so no log call can forget it. */
export function errorFields(err: unknown, depth = 0): ErrorFields {
  if (typeof err !== 'object' || err === null) {
    return { type: typeof err, kind: classify(err), message: scrubAddresses(String(err)) };
  }
  const e = err as ForeignFields;
  const fields: ErrorFields = {
    type: typeof e.name === 'string' ? e.name : (err.constructor?.name ?? 'Object'),
    kind: classify(err),
    message: scrubAddresses(typeof e.message === 'string' ? e.message : ''),
  };
  if (typeof e.code === 'string' || typeof e.code === 'number') fields.code = String(e.code);
  if (typeof e.responseCode === 'number') fields.responseCode = e.responseCode;
  // An SMTP error's `response` is the relay's reply: only its enhanced status is kept, the text names addresses.
  const enhanced = typeof e.response === 'string' ? ENHANCED_STATUS.exec(e.response)?.[1] : undefined;
  if (enhanced !== undefined) fields.enhancedStatus = enhanced;
  if (typeof e.command === 'string') fields.command = e.command;
  if (Array.isArray(e.rejected)) fields.refused = e.rejected.length;
  const status = httpStatus(e);
  if (status !== undefined) fields.status = status;
  if (typeof e.constraint === 'string') fields.constraint = e.constraint;
  if (typeof e.table === 'string') fields.table = e.table;
  if (typeof e.stack === 'string') {
    const frames = e.stack.split('\n').filter((line) => /^\s+at /.test(line));
    if (frames.length > 0) fields.stack = scrubAddresses(frames.join('\n'));
  }
  if (e.cause !== undefined && e.cause !== err && depth < MAX_CAUSES) {
    fields.cause = errorFields(e.cause, depth + 1);
  }
  return fields;
}

/** The status of an HTTP error: on the error itself, or on the axios answer it carries (never its body). */
function httpStatus(e: ForeignFields): number | undefined {
  if (typeof e.status === 'number') return e.status;
  const response = e.response as { status?: unknown } | undefined;
  if (typeof response === 'object' && response !== null && typeof response.status === 'number') {
    return response.status;
  }
  return undefined;
}
