// Every event family, in one list: the shared path finds a family here by an event's type, by the name a
// parsed event carries, or by the `kind` column of an outbox row. A new family is a folder and a line here.
import type { FamilyModule } from '../events/familyModule.js';
import { customerReturn } from './customerReturn/index.js';
import { salesOrder } from './salesOrder/index.js';

export const FAMILIES: readonly FamilyModule[] = [salesOrder, customerReturn];

/** The family whose types include `type`; undefined: the event is only recorded. */
export function familyOfType(type: string): FamilyModule | undefined {
  return FAMILIES.find((family) => family.owns(type));
}

/** The family a parsed event named; undefined for an event of no family. */
export function familyNamed(name: string | undefined): FamilyModule | undefined {
  return name === undefined ? undefined : FAMILIES.find((family) => family.name === name);
}

/** The family of a mail_outbox row's kind; an order's row type may leave the kind out. */
export function familyOfMail(kind: string | undefined): FamilyModule | undefined {
  return FAMILIES.find((family) => family.mail.kind === (kind ?? 'order'));
}

/** The family of a portal_push row's kind. */
export function familyOfPush(kind: string | undefined): FamilyModule | undefined {
  return FAMILIES.find((family) => family.push.kind === (kind ?? 'order'));
}
