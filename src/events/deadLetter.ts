// Table dead_letter: refused messages with their reason, kept for an operator to read and replay.
import { deleteOldest } from '../db/deleteOldest.js';
import type { Executor } from '../db/transaction.js';

export interface DeadLetter {
  channel: 'amqp' | 'webhook' | 'event-hub';
  reason: string;
  source: string | undefined;
  eventId: string | undefined;
  /** The order the event named, when it parsed that far: the letter shows on that order's timeline. */
  salesOrder?: string | undefined;
  contentType: string | undefined;
  /** Binary-mode CloudEvents attributes, as InboundMessage carries them: with body and content type, a replay. */
  attributes: Record<string, unknown>;
  /** Transport metadata as received, for diagnosis. */
  headers: Record<string, unknown>;
  body: Buffer;
}

// Enough to diagnose any message; the broker's dead-letter queue keeps the full copy of AMQP messages.
const MAX_STORED_BODY = 1024 * 1024;

/** Keeps a refused message with the reason, where an operator can read it and replay it. */
export async function recordDeadLetter(db: Executor, letter: DeadLetter): Promise<string> {
  const truncated = letter.body.length > MAX_STORED_BODY;
  const { rows } = await db.query<{ id: string }>(
    `insert into dead_letter (channel, reason, source, event_id, content_type, attributes, headers, body, sales_order)
     values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::jsonb, $7::jsonb, $8::bytea, $9::text)
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
      optionalText(letter.salesOrder),
    ],
  );
  return (rows[0] as { id: string }).id;
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
