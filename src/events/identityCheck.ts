// Step 3, as the handler asks for it: the identity checks asked for in one turn (perTurn.ts) for events of one
// source and channel go out as one statement (inbox.ts, checkInboxes); a check alone in its turn, the usual at low rates,
// goes out as checkInbox.
import type { Pool } from 'pg';
import { type Channel, checkInbox, checkInboxes, type InboxEntry } from './inbox.js';
import type { ParsedEvent } from './parsedEvent.js';
import { perTurn } from './perTurn.js';

export type CheckIdentity = (event: ParsedEvent, channel: Channel) => Promise<InboxEntry>;

interface Check {
  event: ParsedEvent;
  channel: Channel;
  resolve: (entry: InboxEntry) => void;
  reject: (err: unknown) => void;
}

/**
 * A failure fails every check of the statement; each retries on its own. An identity asked for twice in one
 * turn (the handler lets one identity through at a time, so only another caller could) is checked in a
 * statement of its own, as one statement cannot count the same row twice.
 */
export function checkIdentityBatched(db: Pool): CheckIdentity {
  const gather = perTurn<Check>((checks) => {
    const batch = new Map<string, Check>();
    for (const check of checks) {
      if (batch.has(check.event.id))
        checkInbox(db, check.event, check.channel).then(check.resolve, check.reject);
      else batch.set(check.event.id, check);
    }
    const [first] = checks as [Check];
    if (batch.size === 1) {
      checkInbox(db, first.event, first.channel).then(first.resolve, first.reject);
      return;
    }
    const events = [...batch.values()].map((check) => check.event);
    checkInboxes(db, first.event.source, events, first.channel, first.event.reconciled?.run ?? null).then(
      (entries) => {
        for (const [id, check] of batch) check.resolve(entries.get(id) as InboxEntry);
      },
      (err: unknown) => {
        for (const check of batch.values()) check.reject(err);
      },
    );
  });
  // One statement per source, channel and reconciliation run: each is one parameter of it.
  return (event, channel) =>
    new Promise((resolve, reject) =>
      gather(`${channel} ${event.reconciled?.run ?? ''} ${event.source}`, {
        event,
        channel,
        resolve,
        reject,
      }),
    );
}
