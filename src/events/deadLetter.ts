// Table dead_letter: refused messages with their reason, kept for an operator to read and replay. A letter not
// yet replayed also recognises its message when the broker sends it again, so that it is refused only once.
import type { Pool } from 'pg';
import { deleteOldest } from '../db/deleteOldest.js';
import { type Executor, withTransaction } from '../db/transaction.js';
import { messageHash } from './messageHash.js';

export interface DeadLetter {
  channel: 'amqp' | 'webhook' | 'event-hub';
  reason: string;
  source: string | undefined;
  eventId: string | undefined;
  /** The event's payload hash, when the message parsed: with source and id, what recognises it. */
  payloadHash: string | undefined;
  /** The family and key the event named, when it parsed that far: the letter shows on that timeline. */
  family?: string | undefined;
  key?: string | undefined;
  contentType: string | undefined;
  /** Binary-mode CloudEvents attributes, as InboundMessage carries them: with body and content type, a replay. */
  attributes: Record<string, unknown>;
  /** Transport metadata as received, for diagnosis. */
  headers: Record<string, unknown>;
  body: Buffer;
}

// Enough to diagnose any message; the broker's dead-letter queue keeps the full copy of AMQP messages.
const MAX_STORED_BODY = 1024 * 1024;

export interface StoredDeadLetter {
  /** Null only when an earlier letter recognised the message but was replayed before it could be read. */
  id: string | null;
  /** True when an earlier delivery of the message stored its letter: nothing was written. */
  earlier: boolean;
}

/**
 * Keeps a refused message with the reason, where an operator can read it and replay it, unless a letter of the
 * same message (unreplayed) is there: then that one's id. Two deliveries refused at once write one letter, as
 * the unique indexes of 0008_refused_once.sql make the second insert wait for the first and then do nothing.
 */
export async function recordDeadLetter(db: Executor, letter: DeadLetter): Promise<StoredDeadLetter> {
  const truncated = letter.body.length > MAX_STORED_BODY;
  const identified =
    letter.source !== undefined && letter.eventId !== undefined && letter.payloadHash !== undefined;
  const hash = identified ? null : messageHash(letter);
  const { rows } = await db.query<{ id: string }>(
    `insert into dead_letter
       (channel, reason, source, event_id, content_type, attributes, headers, body, payload_hash, message_hash,
        family, key)
     values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::jsonb, $7::jsonb, $8::bytea, $9::text, $10::text,
              $11::text, $12::text)
     on conflict do nothing
     returning id::text as "id"`,
    [
      letter.channel,
      textSafe(
        truncated ? `${letter.reason} (body stored truncated to ${MAX_STORED_BODY} bytes)` : letter.reason,
      ),
      optionalText(letter.source),
      optionalText(letter.eventId),
      optionalText(letter.contentType),
      JSON.stringify(letter.attributes, jsonSafe),
      JSON.stringify(letter.headers, jsonSafe),
      truncated ? letter.body.subarray(0, MAX_STORED_BODY) : letter.body,
      identified ? letter.payloadHash : null,
      hash,
      optionalText(letter.family),
      optionalText(letter.key),
    ],
  );
  const inserted = rows[0]?.id;
  if (inserted !== undefined) return { id: inserted, earlier: false };
  // A statement of its own: the letter that won was committed after the insert's snapshot was taken.
  const earlier = identified
    ? await refusedEventLetter(db, letter.source, letter.eventId, letter.payloadHash)
    : await refusedMessageLetter(db, hash);
  return { id: earlier, earlier: true };
}

/** The letter not yet replayed of a refused event, by its identity and payload hash, if there is one. */
async function refusedEventLetter(
  db: Executor,
  source: string | undefined,
  id: string | undefined,
  payloadHash: string | undefined,
): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `select id::text as "id" from dead_letter
     where source = $1::text and event_id = $2::text and payload_hash = $3::text and replayed_at is null`,
    [source, id, payloadHash],
  );
  return rows[0]?.id ?? null;
}

/**
 * refusedMessageLetter ahead of refusing, waiting for no lock on the table beyond a moment: it only spares the
 * refusal its work and names the outcome. refuse() recognises the message as it stores in any case, and a held
 * lock belongs there, where it makes the message go back until the letter can be stored.
 */
export function findRefusedMessage(pool: Pool, hash: string): Promise<string | null> {
  return withTransaction(pool, async (tx) => {
    await tx.query(`set local lock_timeout = '100ms'`);
    return refusedMessageLetter(tx, hash);
  });
}

/** The letter not yet replayed of a refused message that never became an event, by its hash (messageHash.ts). */
async function refusedMessageLetter(db: Executor, hash: string | null): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `select id::text as "id" from dead_letter where message_hash = $1::text and replayed_at is null`,
    [hash],
  );
  return rows[0]?.id ?? null;
}

/**
 * SQL true when the event of identity (`source`, `id`) and payload hash `hash`, SQL expressions of the statement
 * that embeds it (the identity check, inbox.ts), has a dead letter not yet replayed: it was refused, and this is
 * it again.
 */
export function refusedEventSql(source: string, id: string, hash: string): string {
  return `exists (select from dead_letter refused_letter
     where refused_letter.source = ${source} and refused_letter.event_id = ${id}
       and refused_letter.payload_hash = ${hash} and refused_letter.replayed_at is null)`;
}

/** What a replay needs of a stored dead letter: the message as received, its identity, whether it was replayed. */
export interface StoredLetter {
  body: Buffer;
  contentType: string | null;
  attributes: Record<string, unknown>;
  source: string | null;
  eventId: string | null;
  replayedAt: Date | null;
}

export async function findDeadLetter(db: Executor, id: string): Promise<StoredLetter | undefined> {
  const { rows } = await db.query<StoredLetter>(
    `select body, content_type as "contentType", attributes, source, event_id as "eventId",
            replayed_at as "replayedAt"
     from dead_letter where id = $1::bigint`,
    [id],
  );
  return rows[0];
}

/**
 * Marks a dead letter replayed and returns when it was. Two operators replaying at once both get here; the
 * first replay's time is kept.
 */
export async function markReplayed(db: Executor, id: string): Promise<Date | null> {
  const { rows } = await db.query<{ replayedAt: Date }>(
    `update dead_letter set replayed_at = coalesce(replayed_at, now()) where id = $1::bigint
     returning replayed_at as "replayedAt"`,
    [id],
  );
  return rows[0]?.replayedAt ?? null;
}

// Retention: a dead letter that was never replayed is kept, however old: it is the only record of why a message
// was refused, and an operator must see it and decide. Replayed ones are kept for the mail window after the
// replay, so the replay itself stays visible for as long.
export const EXPIRED_REPLAYED_DEAD_LETTERS = deleteOldest('dead_letter', 'replayed_at');

// PostgreSQL text and jsonb refuse NUL characters, which AMQP strings, symbols and property names may carry.
function textSafe(text: string): string {
  return text.replaceAll('\u0000', '\\u0000');
}

// Transports hand over null as often as undefined for a missing value.
function optionalText(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : textSafe(text);
}

// jsonb takes neither bigints nor NUL characters (in values or names), and hostile metadata may carry both.
function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return textSafe(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value)) {
    const entries = Object.entries(value);
    if (entries.some(([name]) => name.includes('\u0000'))) {
      return Object.fromEntries(entries.map(([name, inner]) => [textSafe(name), inner]));
    }
  }
  return value;
}
