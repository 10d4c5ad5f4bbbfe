import pino, { type Logger } from 'pino';
import { errorFields } from './errorFields.js';

// Credentials, tokens and email addresses never reach the logs, wherever they sit in a logged object.
const REDACT = [
  'password',
  '*.password',
  'secret',
  '*.secret',
  '*.clientsecret',
  '*.token',
  '*.authorization',
  'req.headers.authorization',
  'headers.authorization',
  'recipients',
  '*.recipients',
  'to',
  '*.to',
  'from',
  '*.from',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      // Errors are logged by allow-list: pino's own serializer would copy every field a library hung on them.
      serializers: { err: errorFields },
      base: { service: 'fleet-order-notifier' },
    },
    destination,
  );
}
