// What SMTP_URL says about the relay: where it is, how to secure and log on to it, and how many connections
// and messages it takes. The URL reads as nodemailer's does, so a URL written for nodemailer keeps its meaning;
// a query parameter the client does not know is refused at start, never silently ignored.
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { ConnectionOptions } from 'node:tls';

export interface SmtpSettings {
  host: string;
  port: number;
  /** TLS from the first byte (smtps:, or port 465); otherwise STARTTLS whenever the relay offers it. */
  secure: boolean;
  /** Fail rather than send in clear text when the relay offers no STARTTLS. */
  requireTLS: boolean;
  /** Never upgrade with STARTTLS, even when the relay offers it. */
  ignoreTLS: boolean;
  auth?: { user: string; pass: string };
  /** The name the client gives in EHLO. */
  name: string;
  maxConnections: number;
  /** Messages a connection carries before it is closed and a new one opened. */
  maxMessages: number;
  connectionTimeoutMs: number;
  greetingTimeoutMs: number;
  /** How long a reply may take, and how long an idle connection is kept. */
  socketTimeoutMs: number;
  tls: ConnectionOptions;
}

// A connection is kept until the relay or the idle timeout ends it: opening one costs a TCP, TLS and SMTP
// handshake. Relays limit the connections of one client or mailbox; `maxConnections` lowers the four for a
// strict one.
const DEFAULTS = {
  maxConnections: 4,
  maxMessages: Number.POSITIVE_INFINITY,
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 30_000,
};

const NUMBERS = ['maxConnections', 'maxMessages', 'connectionTimeout', 'greetingTimeout', 'socketTimeout'];
const FLAGS = ['pool', 'secure', 'requireTLS', 'ignoreTLS', 'tls.rejectUnauthorized'];
const TEXTS = ['name', 'tls.servername'];

/** The settings of an SMTP URL, or the problems that keep it from being one. */
export function smtpSettings(smtpUrl: string): { settings?: SmtpSettings; problems: string[] } {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    return { problems: ['SMTP_URL must be a URL such as smtp://user:password@relay.example:587'] };
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    return { problems: [`SMTP_URL must start with smtp:// or smtps://, got ${url.protocol}//`] };
  }
  const problems: string[] = [];
  const numbers = new Map<string, number>();
  const flags = new Map<string, boolean>();
  for (const [key, value] of url.searchParams) {
    if (NUMBERS.includes(key)) {
      const n = value === 'Infinity' ? Number.POSITIVE_INFINITY : Number(value);
      if (!(n >= 1)) problems.push(`SMTP_URL's ${key} must be a number of at least 1, got "${value}"`);
      else numbers.set(key, n);
    } else if (FLAGS.includes(key)) {
      if (value !== 'true' && value !== 'false') {
        problems.push(`SMTP_URL's ${key} must be true or false, got "${value}"`);
      } else flags.set(key, value === 'true');
    } else if (!TEXTS.includes(key)) {
      problems.push(
        `SMTP_URL has the unknown parameter "${key}"; known are ${[...NUMBERS, ...FLAGS, ...TEXTS].join(', ')}`,
      );
    }
  }
  if (problems.length > 0) return { problems };
  const port = Number(url.port) || (url.protocol === 'smtps:' ? 465 : 587);
  const number = (key: keyof typeof DEFAULTS) => numbers.get(key) ?? DEFAULTS[key];
  const tls: ConnectionOptions = {};
  const rejectUnauthorized = flags.get('tls.rejectUnauthorized');
  if (rejectUnauthorized !== undefined) tls.rejectUnauthorized = rejectUnauthorized;
  const servername = url.searchParams.get('tls.servername') ?? url.hostname;
  if (isIP(servername) === 0) tls.servername = servername;
  const settings: SmtpSettings = {
    host: url.hostname,
    port,
    secure: flags.get('secure') ?? (url.protocol === 'smtps:' || port === 465),
    requireTLS: flags.get('requireTLS') ?? false,
    ignoreTLS: flags.get('ignoreTLS') ?? false,
    name: url.searchParams.get('name') ?? ehloName(),
    maxConnections: number('maxConnections'),
    // Without a pool, every message has a connection of its own.
    maxMessages: flags.get('pool') === false ? 1 : number('maxMessages'),
    connectionTimeoutMs: number('connectionTimeout'),
    greetingTimeoutMs: number('greetingTimeout'),
    socketTimeoutMs: number('socketTimeout'),
    tls,
  };
  if (url.username !== '' || url.password !== '') {
    settings.auth = { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
  }
  return { settings, problems };
}

/** The host's name when it is fully qualified, else the address literal relays accept from anyone. */
function ehloName(): string {
  const name = hostname();
  return name.includes('.') && isIP(name) === 0 ? name : '[127.0.0.1]';
}
