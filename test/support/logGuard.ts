// Personal data and credentials never reach the service's logs. Every service a test runs, in this process, as
// a child or through the demo's log file, hands every line it writes at debug level to this guard. A line that
// carries what the guard watches is kept, and the setup file (setup.running.ts) or the crash suite fails the test
// with it, the value masked. It watches:
// - every configured address (MAIL_FROM, MAIL_TO) and every address a test puts into mail_recipient;
// - the logon names, emails and names in the tokens the tests sign (jwtSigner.ts);
// - client secrets, OTLP header values and the passwords in DATABASE_URL, SMTP_URL and AMQP_URL;
// - anything shaped like a JWT or a bearer token.
// One file's tests run one after another in one worker, so the state is the file's.
import { readFile } from 'node:fs/promises';
import pino, { type Logger } from 'pino';
import { createLogger } from '../../src/telemetry/logger.js';

// Shapes of a credential no configuration names: a JWT (its base64url header starts with eyJ) and a bearer token.
const PATTERNS: Array<[RegExp, string]> = [
  [/eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*/g, 'a JWT'],
  [/\bbearer\s+[\w.~+/=-]{16,}/gi, 'a bearer token'],
];
// Values shorter than this would match unrelated text; no real address or secret is this short.
const MIN_LENGTH = 6;
const DEBUG = 20;

/** Watched value (lower-cased) -> what it is, for the failure message. */
const watched = new Map<string, string>();
const leaks: string[] = [];

/** Fails the test if a log line carries any of `values`; `what` names them in the failure (e.g. `MAIL_TO`). */
export function watchLogFor(what: string, ...values: string[]): void {
  for (const value of values) {
    if (value.trim().length >= MIN_LENGTH) watched.set(value.trim().toLowerCase(), what);
  }
}

/**
 * Watches what a service's environment configures: MAIL_FROM, MAIL_TO, client secrets, OTLP headers, and the
 * passwords in the URLs of its database, relay and broker.
 */
export function watchServiceEnv(env: Readonly<Record<string, string | undefined>>): void {
  watchLogFor('MAIL_FROM', env.MAIL_FROM ?? '');
  watchLogFor('MAIL_TO', ...(env.MAIL_TO ?? '').split(','));
  if (env.VCAP_SERVICES !== undefined)
    watchLogFor('a client secret', ...clientSecrets(JSON.parse(env.VCAP_SERVICES)));
  // key=value pairs, such as Authorization=Bearer …: each value is a credential.
  for (const pair of (env.OTEL_EXPORTER_OTLP_HEADERS ?? '').split(',')) {
    watchLogFor('an OTLP header value', decodeURIComponent(pair.slice(pair.indexOf('=') + 1)));
  }
  for (const key of ['DATABASE_URL', 'SMTP_URL', 'AMQP_URL']) watchUrlPassword(key, env[key]);
}

/**
 * The password of a URL such as postgres://user:password@host, alone and as the URL writes it. A password that is
 * its user's name too (the local services' postgres:postgres) is watched in the URL's form only: alone, it would
 * match every line that names the user.
 */
function watchUrlPassword(key: string, value: string | undefined): void {
  if (value === undefined || !URL.canParse(value)) return;
  const url = new URL(value);
  if (url.password === '') return;
  const [user, password] = [decodeURIComponent(url.username), decodeURIComponent(url.password)];
  watchLogFor(`the password in ${key}`, `${user}:${password}@`, `${url.username}:${url.password}@`);
  if (password !== user) watchLogFor(`the password in ${key}`, password);
}

function clientSecrets(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === 'clientsecret' && typeof inner === 'string' ? [inner] : clientSecrets(inner),
  );
}

/** Checks one log line; a leak is kept, masked, for the end of the test. */
export function checkLogLine(line: string): void {
  const lower = line.toLowerCase();
  const found = [...watched].filter(([value]) => lower.includes(value)).map(([, what]) => what);
  for (const [pattern, what] of PATTERNS) if (line.search(pattern) >= 0) found.push(what);
  if (found.length > 0) leaks.push(`${[...new Set(found)].join(', ')} in: ${mask(line)}`);
}

/** Checks every line of a service's log file, such as the demo's DEMO_DIR/service.log; returns them. */
export async function checkLogFile(path: string): Promise<string[]> {
  const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '');
  for (const line of lines) checkLogLine(line);
  return lines;
}

function mask(line: string): string {
  let masked = line;
  for (const [value, what] of watched) {
    masked = masked.replace(new RegExp(value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), `[${what}]`);
  }
  for (const [pattern, what] of PATTERNS) masked = masked.replace(pattern, `[${what}]`);
  return masked.length > 2000 ? `${masked.slice(0, 2000)}…` : masked;
}

/** Throws, naming the offending lines, if any line since the last call leaked; forgets them. */
export function assertNoLeaks(): void {
  const found = leaks.splice(0);
  if (found.length === 0) return;
  throw new Error(
    `the service logged what it must never log (${found.length} line(s)):\n${found.join('\n')}`,
  );
}

/**
 * A pino destination for a service in this process: every line goes to the guard; those at `level` or above go
 * to `lines`, or without them to stdout.
 */
export function guardedDestination(level: string, lines?: string[]): { write(line: string): void } {
  const least = pino.levels.values[level] ?? Number.POSITIVE_INFINITY;
  return {
    write(line) {
      checkLogLine(line);
      if (Number(/"level":(\d+)/.exec(line)?.[1]) < least) return;
      if (lines === undefined) process.stdout.write(line);
      else lines.push(line);
    },
  };
}

/** The level a guarded logger runs at: debug, or what the test asked for if that shows more. */
export function guardedLevel(level: string): string {
  return (pino.levels.values[level] ?? Number.POSITIVE_INFINITY) < DEBUG ? level : 'debug';
}

/** A logger for service parts a test builds itself: every line passes the guard, as a whole service's do. */
export function guardedLogger(level = process.env.TEST_LOG_LEVEL ?? 'silent'): Logger {
  return createLogger(guardedLevel(level), guardedDestination(level));
}
