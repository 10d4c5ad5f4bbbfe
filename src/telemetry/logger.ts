import pino, { type Logger } from 'pino';

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
    { level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'fleet-order-notifier' } },
    destination,
  );
}
