// A customer return as a warranty case: the absolute values the case holds, its status by the first rule that
// matches, and what a read that finds no return means. Pure.
import type { CustomerReturn } from './entity.js';
import { CUSTOMER_RETURN_KEY, type ReturnChange } from './events.js';

export type CaseStatus = 'Open' | 'InProcess' | 'Completed' | 'Rejected' | 'Withdrawn';

export const CASE_STATUSES: readonly CaseStatus[] = [
  'Open',
  'InProcess',
  'Completed',
  'Rejected',
  'Withdrawn',
];

export interface WarrantyCase {
  customerReturn: string;
  caseStatus: CaseStatus;
  soldToParty: string | null;
  customerReference: string | null;
  /** The sales order the return refers to; null when it refers to another kind of document or none. */
  salesOrder: string | null;
  /** The header's order reason and the items' return reasons, each once, sorted: one list for one state. */
  returnReasons: string[];
  changedAt: Date | null;
  /** When the service read this state from S/4HANA: breaks ties between states with the same changedAt. */
  readAt: Date;
}

/** SD document category of a sales order (VBTYP C), as ReferenceSDDocumentCategory writes it. */
const SALES_ORDER_CATEGORY = 'C';

/** S/4HANA codes: process status A = not yet processed, B = partly, C = completely; rejection C = all rejected. */
export function caseStatusOf(customerReturn: CustomerReturn): Exclude<CaseStatus, 'Withdrawn'> {
  if (customerReturn.rejectionStatus === 'C') return 'Rejected';
  if (customerReturn.overallSDProcessStatus === 'C') return 'Completed';
  if (customerReturn.overallSDProcessStatus === 'B') return 'InProcess';
  return 'Open';
}

/** Every reason the return gives: the header's SDDocumentReason and each item's ReturnReason. */
export function returnReasonsOf(customerReturn: CustomerReturn): string[] {
  const reasons = [customerReturn.orderReason, ...customerReturn.items.map((item) => item.returnReason)];
  return [...new Set(reasons.filter((reason) => reason !== ''))].sort();
}

// A sales order's number is an SD document number like the return's own (VBELN): the same pattern.
const SD_DOCUMENT = CUSTOMER_RETURN_KEY;

/** The key stands in email headers and the portal's body: only a well-formed sales-order key is taken. */
export function salesOrderOf(customerReturn: CustomerReturn): string | null {
  const { referenceSDDocument, referenceSDDocumentCategory } = customerReturn;
  return referenceSDDocumentCategory === SALES_ORDER_CATEGORY && SD_DOCUMENT.test(referenceSDDocument)
    ? referenceSDDocument
    : null;
}

export function toWarrantyCase(customerReturn: CustomerReturn, readAt: Date): WarrantyCase {
  return {
    customerReturn: customerReturn.customerReturn,
    caseStatus: caseStatusOf(customerReturn),
    soldToParty: customerReturn.soldToParty,
    customerReference: customerReturn.customerReference,
    salesOrder: salesOrderOf(customerReturn),
    returnReasons: returnReasonsOf(customerReturn),
    changedAt: customerReturn.changedAt,
    readAt,
  };
}

/**
 * How long a return that an event announced as created or changed may be missing from the API before its event
 * is settled as not found: S/4HANA may publish the event before a read sees the return.
 */
export const RETURN_READ_LAG_MS = 120_000;

/**
 * What a read that found no return (404) means for an event: after `deleted`, the case is withdrawn; after
 * `created` or `changed`, the read is tried again (a transient failure) until the event has waited
 * `maxLagMs` since it was first seen, and then the event is settled as not found, as for orders. On its last
 * delivery (`lastDelivery`) it waits no longer: released once more, it would be dead-lettered for its count.
 */
export function whenReturnMissing(
  change: ReturnChange,
  waitedMs: number,
  maxLagMs = RETURN_READ_LAG_MS,
  lastDelivery = false,
): 'withdrawn' | 'retry' | 'not_found' {
  if (change === 'deleted') return 'withdrawn';
  return waitedMs < maxLagMs && !lastDelivery ? 'retry' : 'not_found';
}
