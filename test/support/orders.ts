import type { S4Server, SalesOrderState } from '../../sandbox/s4Server.js';

type Change = Partial<SalesOrderState>;

const DEFAULT_ORDER: Omit<SalesOrderState, 'salesOrder'> = {
  soldToParty: '17100001',
  customerReference: 'PO-4711',
  requestedDeliveryDate: '2026-12-15',
  lastChangeDateTime: '2026-11-30T10:00:00Z',
  overallSDProcessStatus: 'A',
};

/**
 * Orders in the S/4HANA stand-in with fresh numbers from `first` on, so tests sharing one database never see each
 * other's orders. `s4` is a getter because stand-ins start in beforeAll.
 */
export function orderMaker(s4: () => S4Server, first: number, defaults: Change = {}) {
  let next = first;
  return {
    /** Creates an order (defaults, then `defaults`, then `state`) and returns its number. */
    newOrder(state: Change = {}): string {
      const salesOrder = String(next++);
      s4().setOrder({ ...DEFAULT_ORDER, ...defaults, ...state, salesOrder });
      return salesOrder;
    },
    /** Changes an existing order in S/4HANA, as a user or a follow-on document would. */
    changeOrder(salesOrder: string, change: Change): void {
      const current = s4().getOrder(salesOrder);
      if (current === undefined) throw new Error(`no order ${salesOrder}`);
      s4().setOrder({ ...current, ...change });
    },
  };
}
