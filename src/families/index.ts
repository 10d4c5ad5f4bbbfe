// Every event family, in one list, and the ports of the shared path filled from it. Only the composition root
// (src/service/) reads this module; it hands each shared module the part it asks for. A new family is a folder of
// the same files as the others (docs/development.md, "How to add an event family"), and a line here: the shared tables name a
// document by `family` and `key` and hold what only the family knows as jsonb.
import type { EventKeys } from '../events/family.js';
import type { FamilyAdmin } from '../http/familyAdmin.js';
import type { Expiry } from '../maintenance/retention.js';
import type { MailKind } from '../notifications/mailKind.js';
import type { PushKind } from '../portal/pushKind.js';
import { customerReturn } from './customerReturn/index.js';
import type { FamilyModule, FamilySettings } from './familyModule.js';
import { salesOrder } from './salesOrder/index.js';

export type { FamilyModule } from './familyModule.js';

export const FAMILIES: readonly FamilyModule[] = [salesOrder, customerReturn];

/** The parser's, the logs' and the traces' part of every family. */
export const EVENT_KEYS: readonly EventKeys[] = FAMILIES;

/** The mail sender's part: each family's outbox rows (by its name), its key's names and its email, with its
 * settings bound. */
export function mailKinds(settings: FamilySettings): readonly MailKind[] {
  return FAMILIES.map(({ name, logKey, spanKey, mail }) => ({
    family: name,
    logKey,
    spanKey,
    ...mail(settings),
  }));
}

/** The portal sender's part: each family's push rows, its key and its resource. */
export const PUSH_KINDS: readonly PushKind[] = FAMILIES.map(({ name, logKey, push }) => ({
  family: name,
  logKey,
  ...push,
}));

/** The admin API's part: each family's routes, overview, timeline and counts. */
export const FAMILY_ADMINS: readonly FamilyAdmin[] = FAMILIES.map((family) => family.admin);

/** Retention's part: what each family's tables let expire. */
export const FAMILY_EXPIRIES: readonly Expiry[] = FAMILIES.flatMap((family) => family.expiries);
