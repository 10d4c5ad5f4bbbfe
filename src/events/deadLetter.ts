import type { Executor } from '../db/transaction.js';

export interface DeadLetter {
  channel: 'amqp' | 'webhook';
  reason: string;
  source: string | undefined;
  eventId: string | undefined;
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
    `insert into dead_letter (channel, reason, source, event_id, content_type, attributes, headers, body)
     values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::jsonb, $7::jsonb, $8::bytea)
     returning id::text as "id"`,
    [
      letter.channel,
      truncated ? `${letter.reason} (body stored truncated to ${MAX_STORED_BODY} bytes)` : letter.reason,
      letter.source ?? null,
      letter.eventId ?? null,
      letter.contentType ?? null,
      JSON.stringify(letter.attributes, jsonSafe),
      JSON.stringify(letter.headers, jsonSafe),
      truncated ? letter.body.subarray(0, MAX_STORED_BODY) : letter.body,
    ],
  );
  return (rows[0] as { id: string }).id;
}

// jsonb takes neither bigints nor NUL characters, and hostile headers may carry both.
function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return value.replaceAll('\u0000', '\\u0000');
  return value;
}
