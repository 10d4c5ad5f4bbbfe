// Replays a stored dead letter through the same handler as live messages, for an operator who removed the
// cause (S/4HANA fixed, a bug fixed and deployed). Nothing here writes a new dead letter: a replay that is
// refused again leaves the stored one as it is, unreplayed, with its original reason.
import type { Pool } from 'pg';
import type { HandleEvent, Outcome } from './handleEvent.js';

export type ReplayResult =
  | { kind: 'not_found' }
  | { kind: 'already_replayed'; replayedAt: Date }
  /** `replayedAt` is set when the outcome was accept; otherwise the letter stays as it was. */
  | { kind: 'handled'; outcome: Outcome; replayedAt: Date | null };

interface StoredLetter {
  body: Buffer;
  contentType: string | null;
  attributes: Record<string, unknown>;
  source: string | null;
  eventId: string | null;
  replayedAt: Date | null;
}

export async function replayDeadLetter(pool: Pool, id: string, handle: HandleEvent): Promise<ReplayResult> {
  const { rows } = await pool.query<StoredLetter>(
    `select body, content_type as "contentType", attributes, source, event_id as "eventId",
            replayed_at as "replayedAt"
     from dead_letter where id = $1::bigint`,
    [id],
  );
  const letter = rows[0];
  if (letter === undefined) return { kind: 'not_found' };
  if (letter.replayedAt !== null) return { kind: 'already_replayed', replayedAt: letter.replayedAt };

  if (letter.source !== null && letter.eventId !== null) {
    // A replay is an operator's decision to try again: the event starts with a fresh delivery budget,
    // whatever deliveries it used up before it was dead-lettered.
    await pool.query(`update event_attempt set attempts = 0 where source = $1::text and id = $2::text`, [
      letter.source,
      letter.eventId,
    ]);
  }
  const { outcome } = await handle(
    { body: letter.body, contentType: letter.contentType ?? undefined, binaryAttributes: letter.attributes },
    { channel: 'replay' },
  );
  if (outcome.kind !== 'accept') return { kind: 'handled', outcome, replayedAt: null };

  // Two operators replaying at once both reach here; the event's identity made the second a duplicate, and
  // the first replay's time is kept.
  const marked = await pool.query<{ replayedAt: Date }>(
    `update dead_letter set replayed_at = coalesce(replayed_at, now()) where id = $1::bigint
     returning replayed_at as "replayedAt"`,
    [id],
  );
  return { kind: 'handled', outcome, replayedAt: marked.rows[0]?.replayedAt ?? null };
}
