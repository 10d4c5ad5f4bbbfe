// One statement for the events that one S/4HANA read answered. A batched read answers every event waiting for
// a document (an order, a return) at once, so their effects write the very same state: written one by one, each
// statement would lock the document's row behind the one before and repeat the upsert. Grouped, they cost one
// statement.
import type { Context } from '../telemetry/tracing.js';
import type { EffectResult } from './effect.js';
import type { ParsedEvent } from './parsedEvent.js';
import { perTurn } from './perTurn.js';

/** Writes the effect of `events`, all of one document with the same state, in one statement (the family's). */
export type WriteGroup<State> = (
  events: ParsedEvent[],
  state: State,
  trace: Context,
) => Promise<EffectResult>;

/** Writes the effect of one event, in a statement shared with the events whose states equal its own. */
export type GroupedWriteEffect<State> = (
  event: ParsedEvent,
  state: State,
  trace: Context,
) => Promise<EffectResult>;

interface Member<State> {
  event: ParsedEvent;
  state: State;
  trace: Context;
  resolve: (result: EffectResult) => void;
  reject: (err: unknown) => void;
}

/**
 * Effects asked for within one turn of the event loop for events of one source with equal states (same document,
 * same values, same read time) go out together at the end of the turn; an effect alone waits for nothing but the
 * rest of its turn. When the group's statement finds one of its identities recorded already (`duplicate`: another delivery won
 * the race, and the statement wrote nothing), each event is written on its own, so only that one is a
 * duplicate. A failure fails every event of the group; each retries on its own (handleEvent.ts).
 */
export function groupEffects<State>(write: WriteGroup<State>): GroupedWriteEffect<State> {
  async function flush(members: Array<Member<State>>): Promise<void> {
    const [first] = members as [Member<State>];
    const { state } = first;
    try {
      // The first event's transaction span is the one the queued email links back to.
      const together = await write(
        members.map((member) => member.event),
        state,
        first.trace,
      );
      if (together.result !== 'duplicate' || members.length === 1) {
        for (const member of members) member.resolve(together);
        return;
      }
    } catch (err) {
      for (const member of members) member.reject(err);
      return;
    }
    for (const member of members)
      write([member.event], state, member.trace).then(member.resolve, member.reject);
  }

  const gather = perTurn<Member<State>>((members) => void flush(members));
  return (event, state, trace) =>
    new Promise((resolve, reject) =>
      gather(JSON.stringify([event.source, state]), { event, state, trace, resolve, reject }),
    );
}
