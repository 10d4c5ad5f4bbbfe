// What tells a redelivery from a conflict under one identity (source + id): a hash over what the event means,
// not over how it travelled. Brokers and relays add extension attributes (Event Hub: `kafkapartition`,
// `kafkaoffset`, `sapconsumertenant`), SDKs rewrite `time` (`…:54Z` as `…:54.000Z`), and the same event arrives
// structured on one path and binary on another; none of that changes the event. So the hash covers `type`,
// `subject`, the data's media type, `data` in canonical JSON (RFC 8785) and `time` as an instant; `specversion`,
// `dataschema` and extension attributes are left out (they stay in the dead-letter record and the logs).
//
// Stored hashes carry a version prefix. Databases from before it hold hashes over every attribute as written
// (unprefixed hex): a redelivery of such an event is still compared with that older hash, so it stays a
// duplicate after an upgrade; those records expire with DEDUP_RETENTION_DAYS.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

const VERSION = 'm1:';
// RFC 3339 date-time, as the CloudEvents `time` attribute is defined.
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export interface PayloadHashes {
  /** The hash of the event's meaning, as recorded from now on. */
  payloadHash: string;
  /**
   * The hash over every attribute as written, as recorded before: needed only against an unprefixed record, so
   * computed on first use (it costs as much as the hash itself).
   */
  legacyPayloadHash(): string;
}

export function payloadHashes(event: Record<string, unknown>): PayloadHashes {
  let legacy: string | undefined;
  return {
    payloadHash: meaningHash(event),
    legacyPayloadHash: () => {
      legacy ??= legacyHash(event);
      return legacy;
    },
  };
}

/** Whether a recorded hash stands for the same event as `hashes`: a duplicate rather than a conflict. */
export function samePayload(recorded: string, hashes: PayloadHashes): boolean {
  return isLegacyHash(recorded) ? recorded === hashes.legacyPayloadHash() : recorded === hashes.payloadHash;
}

/** True for a record written before hashes covered meaning only: its comparison is byte for byte. */
export function isLegacyHash(recorded: string): boolean {
  return !recorded.startsWith(VERSION);
}

function meaningHash(event: Record<string, unknown>): string {
  const meaning = {
    type: own(event, 'type'),
    subject: own(event, 'subject') ?? null,
    datacontenttype: dataMediaType(own(event, 'datacontenttype')),
    data: own(event, 'data') ?? null,
    // Binary data in structured mode: its bytes, whatever the base64 spelling (padding, line breaks).
    data_base64: dataBase64(own(event, 'data_base64')),
    time: instant(own(event, 'time')),
  };
  return `${VERSION}${sha256(canonicalize(meaning) ?? '')}`;
}

/** The hash before meaning only: canonical JSON of every attribute, the content type reduced to its media type. */
function legacyHash(event: Record<string, unknown>): string {
  const contentType = own(event, 'datacontenttype') ?? 'application/json';
  return sha256(
    canonicalize({
      ...event,
      datacontenttype: typeof contentType === 'string' ? mediaType(contentType) : contentType,
    }) ?? '',
  );
}

// An absent datacontenttype means JSON (CloudEvents JSON format 3.1); parameters such as charset are not meaning.
function dataMediaType(value: unknown): unknown {
  if (value === undefined) return 'application/json';
  return typeof value === 'string' ? mediaType(value) : value;
}

function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

function dataBase64(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? null;
  return Buffer.from(value, 'base64').toString('base64');
}

/**
 * An RFC 3339 time as one spelling of its instant: UTC seconds since the epoch and the fraction without trailing
 * zeros, so `13:19:54Z`, `13:19:54.000Z` and `14:19:54+01:00` agree, and digits beyond milliseconds (S/4HANA
 * writes seven) still count. Anything else is kept as written: it cannot be compared by meaning.
 */
function instant(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value !== 'string') return value;
  const match = RFC3339.exec(value);
  if (match === null) return { unparsed: value };
  const part = (index: number) => Number(match[index] ?? 0);
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map(part) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return { unparsed: value };
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // not Date.UTC: it reads years below 100 as 19xx
  date.setUTCHours(hour, minute, second);
  const offset = (match[9] === '-' ? -1 : 1) * (part(10) * 3600 + part(11) * 60);
  const fraction = match[7] ?? '';
  const digits = fraction.replace(/0+$/, '');
  return `${date.getTime() / 1000 - offset}${digits === '' ? '' : `.${digits}`}`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}
