// Every event family, in one list, and the ports of the shared path filled from a list of families: this one, or
// the one buildService is given (a test adds a family of its own). Only the composition root (src/service/) reads
// this module; it hands each shared module the part it asks for. A new family is a folder of the same files as
// the others (docs/development.md, "How to add an event family"), and a line here: the shared tables name a
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
export function mailKinds(
  settings: FamilySettings,
  families: readonly FamilyModule[] = FAMILIES,
): readonly MailKind[] {
  return families.map(({ name, logKey, spanKey, mail }) => ({
    family: name,
    logKey,
    spanKey,
    ...mail(settings),
  }));
}

/** The portal sender's part: each family's push rows, its key and its resource. */
export function pushKinds(families: readonly FamilyModule[] = FAMILIES): readonly PushKind[] {
  return families.map(({ name, logKey, push }) => ({ family: name, logKey, ...push }));
}

export const PUSH_KINDS = pushKinds();

/** The admin API's part: each family's routes, overview, timeline and counts. */
export function familyAdmins(families: readonly FamilyModule[] = FAMILIES): readonly FamilyAdmin[] {
  return families.map((family) => family.admin);
}

export const FAMILY_ADMINS = familyAdmins();

/** Retention's part: what each family's tables let expire. */
export function familyExpiries(families: readonly FamilyModule[] = FAMILIES): readonly Expiry[] {
  return families.flatMap((family) => family.expiries);
}

export const FAMILY_EXPIRIES = familyExpiries();
