// What the portal sender asks of an event family: which outbox rows are its (portal_push.kind), what its key is
// called and is, and where its state goes with what body. The composition root hands the families in.
import type { ClaimedPush } from './pushOutbox.js';

// Methods, not function properties, as in MailKind: the row's kind is what chose the family.
export interface PushKind<Push extends ClaimedPush = ClaimedPush> {
  /** portal_push.kind of its rows. */
  kind: string;
  /** The key's name in log lines. */
  logKey: string;
  keyOf(push: Push): string;
  /** The PUT's path below the portal's base URL, and its JSON body. */
  request(push: Push): { path: string; body: unknown };
}

/** The family of a portal_push row's kind; undefined for a kind no family pushes. */
export function pushKindOf(kinds: readonly PushKind[], kind: string | undefined): PushKind | undefined {
  return kinds.find((family) => family.kind === kind);
}
