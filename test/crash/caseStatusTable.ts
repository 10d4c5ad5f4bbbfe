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

export type ExpectedCaseStatus = (typeof RULES)[number][0] | 'Open';

export function expectedCaseStatus(customerReturn: CustomerReturnState): ExpectedCaseStatus {
  return RULES.find(([, applies]) => applies(customerReturn))?.[0] ?? 'Open';
}

/** The case a return's state must end as, in the service's table and in the portal's API. */
export function expectedCase(customerReturn: CustomerReturnState) {
  return {
    caseStatus: expectedCaseStatus(customerReturn),
    customerReference: customerReturn.customerReference ?? null,
  };
}

export type ExpectedCase = ReturnType<typeof expectedCase>;
