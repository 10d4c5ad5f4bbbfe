// What the fleet portal is told of a warranty case: `PUT <portal>/warranty-cases/<customerReturn>` with the
// case's absolute values, so a repeated PUT (same Idempotency-Key) is harmless. Pure; the push outbox sends it.
import type { WarrantyCase } from './state.js';

/** The body of the PUT: the contract, field for field. */
export interface WarrantyCaseBody {
  customerReturn: string;
  caseStatus: string;
  soldToParty: string | null;
  customerReference: string | null;
  salesOrder: string | null;
  returnReasons: string[];
  s4ChangedAt: string | null;
}

/** The resource's path below the portal's base URL, the key encoded. */
export function warrantyCasePath(customerReturn: string): string {
  return `/warranty-cases/${encodeURIComponent(customerReturn)}`;
}

export function warrantyCaseBody(
  state: Pick<
    WarrantyCase,
    'customerReturn' | 'soldToParty' | 'customerReference' | 'salesOrder' | 'returnReasons'
  > & {
    caseStatus: string;
    s4ChangedAt: Date | null;
  },
): WarrantyCaseBody {
  return {
    customerReturn: state.customerReturn,
    caseStatus: state.caseStatus,
    soldToParty: state.soldToParty,
    customerReference: state.customerReference,
    salesOrder: state.salesOrder,
    returnReasons: [...state.returnReasons],
    s4ChangedAt: state.s4ChangedAt === null ? null : state.s4ChangedAt.toISOString(),
  };
}
