import pino, { type Logger } from 'pino';
import { errorFields } from './errorFields.js';

// Credentials, tokens and email addresses never reach the logs: these keys are censored at the top of a logged
// object, one level below it, and in `req.headers`.
const CENSORED = new Set([
  'password',
  'secret',
  'clientsecret',
  'token',
  'authorization',
  'recipients',
  'to',
  'from',
]);
const CENSOR = '[redacted]';

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const logger = pino(
    {
      level,
      // Not pino's `redact`: it parses its paths again and clones the object for every field of every line. One
      // pass over a line's fields does the same (test/unit/logger.test.ts has the rules).
      formatters: { log: redacted, bindings: redacted },
      // Errors are logged by allow-list: pino's own serializer would copy every field a library hung on them.
      serializers: { err: errorFields },
      base: { service: 'fleet-order-notifier' },
    },
    destination,
  );
  // pino applies the bindings formatter to the root's bindings only; every child (each inherits this method)
  // has its bindings redacted here.
  const child = logger.child;
  logger.child = function redactedChild(this: Logger, bindings, options) {
    return child.call(this, redacted(bindings), options);
  } as typeof child;
  return logger;
}

/** `fields` with the censored keys replaced, copied only where one is found: the caller's object stays as it was. */
function redacted(fields: Record<string, unknown>, depth = 0, name = ''): Record<string, unknown> {
  let result = fields;
  for (const key in fields) {
    const value = fields[key];
    let replacement = value;
    if (CENSORED.has(key)) replacement = CENSOR;
    else if ((depth === 0 || (depth === 1 && name === 'req' && key === 'headers')) && isPlain(value))
      replacement = redacted(value, depth + 1, key);
    if (replacement !== value) {
      if (result === fields) result = { ...fields };
      result[key] = replacement;
    }
  }
  return result;
}

/** A plain object (not an Error, Date or Buffer, which their serializers or JSON handle as they are). */
function isPlain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
