// What reconciliation reads of customer returns (docs/reconciliation.md): the entity set event reads use, with
// its items expanded, the returns S/4HANA holds as open (neither completed nor rejected), each row mapped to the
// case an event's read would give, and the cases the service holds as open, which a sweep reads by key when
// S/4HANA's open list no longer names them. A return S/4HANA no longer has is withdrawn, as after its Deleted
// event.
import type { Executor } from '../../db/transaction.js';
import type { ApiVersion } from '../../s4/odataService.js';
import type { FamilyCollection } from '../familyModule.js';
import type { CaseState } from './effect.js';
import { toCustomerReturn } from './entity.js';
import { withdrawnCase } from './family.js';
import { customerReturnV2, customerReturnV4 } from './services.js';
import { toWarrantyCase } from './state.js';
import { isWarrantyCase } from './warrantyFilter.js';

export function customerReturnCollection(
  version: ApiVersion,
  warrantyReturnReasons: ReadonlySet<string> | undefined,
): FamilyCollection<CaseState> {
  const service = version === 'v4' ? customerReturnV4 : customerReturnV2;
  return {
    service,
    openFilter: "OverallSDProcessStatus ne 'C' and OverallSDDocumentRejectionSts ne 'C'",
    map(entity, key) {
      const found = toCustomerReturn(entity, key, service);
      return { ...toWarrantyCase(found, new Date()), isCase: isWarrantyCase(found, warrantyReturnReasons) };
    },
    deleted: (key, readAt) => withdrawnCase(key, readAt),
  };
}

/** The cases still open: neither Completed, Rejected nor Withdrawn. */
export async function openCaseKeys(db: Executor): Promise<string[]> {
  const { rows } = await db.query<{ key: string }>(
    `select customer_return as "key" from warranty_case
     where opened and case_status not in ('Completed', 'Rejected', 'Withdrawn')`,
  );
  return rows.map((row) => row.key);
}
