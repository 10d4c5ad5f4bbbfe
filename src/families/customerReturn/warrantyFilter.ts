// Which returns are warranty cases: WARRANTY_RETURN_REASONS lists the return reasons that make one. Pure.
import type { CustomerReturn } from './entity.js';

/**
 * True when the header's SDDocumentReason or any item's ReturnReason is one of `reasons`; every return is a case
 * when no list is configured (`undefined`).
 */
export function isWarrantyCase(
  customerReturn: CustomerReturn,
  reasons: ReadonlySet<string> | undefined,
): boolean {
  if (reasons === undefined) return true;
  return (
    reasons.has(customerReturn.orderReason) ||
    customerReturn.items.some((item) => reasons.has(item.returnReason))
  );
}
