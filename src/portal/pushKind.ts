// What the portal sender asks of an event family: which outbox rows are its (portal_push.family), what its key is
// called, and where its state goes with what body. The composition root hands the families in.
import type { ClaimedPush } from './pushOutbox.js';

export interface PushKind {
  /** portal_push.family of its rows: the family's name. */
  family: string;
  /** The key's name in log lines. */
  logKey: string;
  /** The PUT's path below the portal's base URL, and its JSON body; throws a PermanentError on content the
   * family never wrote. */
  request(push: ClaimedPush): { path: string; body: unknown };
}

/** The family of a portal_push row; undefined for a family that pushes nothing. */
export function pushKindOf(kinds: readonly PushKind[], family: string): PushKind | undefined {
  return kinds.find((kind) => kind.family === family);
}
