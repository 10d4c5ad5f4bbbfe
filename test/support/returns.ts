// A customer return for the S/4HANA stand-in: a warranty return of an order, open, with one item.
import type { CustomerReturnState } from '../../sandbox/s4Returns.js';

export function returnState(
  customerReturn: string,
  fields: Partial<CustomerReturnState> = {},
): CustomerReturnState {
  return {
    customerReturn,
    lastChangeDateTime: '2026-11-30T10:00:00Z',
    soldToParty: '17100002',
    customerReference: 'RMA 7731',
    orderReason: '009',
    referenceSDDocument: '1000473',
    referenceSDDocumentCategory: 'C',
    overallSDProcessStatus: 'A',
    rejectionStatus: 'A',
    items: [{ customerReturnItem: '10', returnReason: '103' }],
    ...fields,
  };
}
