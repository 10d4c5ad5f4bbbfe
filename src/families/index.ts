// Every event family, in one list: the shared path finds a family here by an event's type, or by the name a
// parsed event carries and every shared table keeps (`family`). A new family is a folder and a line here.
import type { FamilyModule } from '../events/familyModule.js';
import { customerReturn } from './customerReturn/index.js';
import { salesOrder } from './salesOrder/index.js';

export const FAMILIES: readonly FamilyModule[] = [salesOrder, customerReturn];

/** The family whose types include `type`; undefined: the event is only recorded. */
export function familyOfType(type: string): FamilyModule | undefined {
  return FAMILIES.find((family) => family.owns(type));
}

/** The family a parsed event or a table's row names; undefined for none. */
export function familyNamed(name: string | undefined): FamilyModule | undefined {
  return name === undefined ? undefined : FAMILIES.find((family) => family.name === name);
}
