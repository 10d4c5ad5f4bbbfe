// Replays a stored dead letter through the same handler as live messages, for an operator who removed the
// cause (S/4HANA fixed, a bug fixed and deployed). Nothing here writes a new dead letter: a replay that is
// refused again leaves the stored one as it is, unreplayed, with its original reason.
import type { Pool } from 'pg';
import { findDeadLetter, markReplayed } from './deadLetter.js';
import { clearAttempts } from './inbox.js';
import type { HandleEvent, Outcome } from './outcome.js';

export type ReplayResult =
  | { kind: 'not_found' }
  | { kind: 'already_replayed'; replayedAt: Date }
  /** `replayedAt` is set when the outcome was accept; otherwise the letter stays as it was. */
  | { kind: 'handled'; outcome: Outcome; replayedAt: Date | null };

export async function replayDeadLetter(pool: Pool, id: string, handle: HandleEvent): Promise<ReplayResult> {
  const letter = await findDeadLetter(pool, id);
  if (letter === undefined) return { kind: 'not_found' };
  if (letter.replayedAt !== null) return { kind: 'already_replayed', replayedAt: letter.replayedAt };

  if (letter.source !== null && letter.eventId !== null) {
    // A replay is an operator's decision to try again: the event starts with a fresh delivery budget,
    // whatever deliveries it used up since it was dead-lettered.
    await clearAttempts(pool, { source: letter.source, id: letter.eventId });
  }
  const { outcome } = await handle(
    { body: letter.body, contentType: letter.contentType ?? undefined, binaryAttributes: letter.attributes },
    { channel: 'replay' },
  );
  if (outcome.kind !== 'accept') return { kind: 'handled', outcome, replayedAt: null };
  return { kind: 'handled', outcome, replayedAt: await markReplayed(pool, id) };
}
