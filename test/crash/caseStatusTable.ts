// The warranty case status the crash suite expects, written from the case status table in the contracts
// (Warranty cases), not taken from the service: a wrong rule in the service then shows as a finding.
import type { CustomerReturnState } from '../../sandbox/s4Returns.js';

type Rule = (customerReturn: CustomerReturnState) => boolean;

/** First rule that matches, in the contracts' order; none matching is Open. */
const RULES = [
  ['Rejected', (r) => r.rejectionStatus === 'C'],
  ['Completed', (r) => r.overallSDProcessStatus === 'C'],
  ['InProcess', (r) => r.overallSDProcessStatus === 'B'],
] as const satisfies ReadonlyArray<readonly [string, Rule]>;

/** Withdrawn: the return is gone (a 404 after its Deleted event). */
export type ExpectedCaseStatus = (typeof RULES)[number][0] | 'Open' | 'Withdrawn';

export function expectedCaseStatus(
  customerReturn: CustomerReturnState,
): Exclude<ExpectedCaseStatus, 'Withdrawn'> {
  return RULES.find(([, applies]) => applies(customerReturn))?.[0] ?? 'Open';
}

export interface ExpectedCase {
  caseStatus: ExpectedCaseStatus;
  soldToParty: string | null;
  customerReference: string | null;
  salesOrder: string | null;
  returnReasons: string[];
}

/**
 * The case a return's state must end as, in the service's table and in the portal's API, by the contracts: the
 * sales order is the reference when its category is C; the reasons are the header's and the items', each once,
 * sorted. A deleted return's case is withdrawn and keeps the values it had.
 */
export function expectedCase(customerReturn: CustomerReturnState, deleted = false): ExpectedCase {
  const reasons = [
    customerReturn.orderReason,
    ...(customerReturn.items ?? []).map((item) => item.returnReason),
  ];
  return {
    caseStatus: deleted ? 'Withdrawn' : expectedCaseStatus(customerReturn),
    soldToParty: customerReturn.soldToParty ?? null,
    customerReference: customerReturn.customerReference ?? null,
    salesOrder:
      customerReturn.referenceSDDocumentCategory === 'C'
        ? (customerReturn.referenceSDDocument ?? null)
        : null,
    returnReasons: [...new Set(reasons.filter((reason): reason is string => Boolean(reason)))].sort(),
  };
}
