// The customer return as the service uses it, mapped from either API version's entity with its items.
// Pure: the reads live in api.ts, each version's names and item envelope in services.ts.
import type { TimeFormat } from '../../s4/odataEntity.js';
import { UnexpectedResponseError } from '../../s4/odataEntity.js';

export interface CustomerReturnItem {
  customerReturnItem: string;
  /** ReturnReason: why the customer sent this item back. */
  returnReason: string;
  returnsRefundType: string;
  /** CustRetItmFollowUpActivity: what happens to the item next (credit, replacement, …). */
  followUpActivity: string;
  referenceSDDocument: string;
  referenceSDDocumentItem: string;
  /** V2's Material, V4's Product. */
  material: string;
}

export interface CustomerReturn {
  customerReturn: string;
  customerReturnType: string;
  soldToParty: string | null;
  /** PurchaseOrderByCustomer */
  customerReference: string | null;
  /** SDDocumentReason: the order reason of the whole return. */
  orderReason: string;
  referenceSDDocument: string;
  /** SD document category of the reference: C for a sales order. */
  referenceSDDocumentCategory: string;
  overallSDProcessStatus: string;
  rejectionStatus: string;
  /** RetsMgmtProcessingStatus (advanced returns management). */
  returnsProcessingStatus: string;
  /** YYYY-MM-DD, or null when S/4HANA has none. */
  creationDate: string | null;
  /** LastChangeDateTime: orders states of one return; null if the release does not fill it. */
  changedAt: Date | null;
  items: CustomerReturnItem[];
}

/** What tells the two API versions' returns apart, beside their envelopes. */
export interface ReturnDialect {
  time: TimeFormat;
  /** The expanded items of a header entity. */
  items(entity: Record<string, unknown>): Array<Record<string, unknown>>;
  /** The item's product property: `Material` (V2) or `Product` (V4). */
  materialProperty: string;
}

/** Maps one header entity, items expanded, read for `expectedKey`. */
export function toCustomerReturn(
  entity: Record<string, unknown>,
  expectedKey: string,
  dialect: ReturnDialect,
): CustomerReturn {
  if (entity.CustomerReturn !== expectedKey) {
    throw new UnexpectedResponseError(
      `response is for customer return ${JSON.stringify(entity.CustomerReturn)}`,
    );
  }
  const text = textOf(entity);
  return {
    customerReturn: expectedKey,
    customerReturnType: text('CustomerReturnType'),
    soldToParty: text('SoldToParty') || null,
    customerReference: text('PurchaseOrderByCustomer') || null,
    orderReason: text('SDDocumentReason'),
    referenceSDDocument: text('ReferenceSDDocument'),
    referenceSDDocumentCategory: text('ReferenceSDDocumentCategory'),
    overallSDProcessStatus: text('OverallSDProcessStatus'),
    rejectionStatus: text('OverallSDDocumentRejectionSts'),
    returnsProcessingStatus: text('RetsMgmtProcessingStatus'),
    creationDate: dialect.time.date(entity.CreationDate),
    changedAt: dialect.time.dateTime(entity.LastChangeDateTime),
    items: dialect.items(entity).map((item) => {
      const field = textOf(item);
      return {
        customerReturnItem: field('CustomerReturnItem'),
        returnReason: field('ReturnReason'),
        returnsRefundType: field('ReturnsRefundType'),
        followUpActivity: field('CustRetItmFollowUpActivity'),
        referenceSDDocument: field('ReferenceSDDocument'),
        referenceSDDocumentItem: field('ReferenceSDDocumentItem'),
        material: field(dialect.materialProperty),
      };
    }),
  };
}

/** A text property trimmed; '' for null, absent or not a string. */
function textOf(entity: Record<string, unknown>): (name: string) => string {
  return (name) => {
    const value = entity[name];
    return typeof value === 'string' ? value.trim() : '';
  };
}
