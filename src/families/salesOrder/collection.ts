// What reconciliation reads of sales orders (docs/reconciliation.md): the entity set event reads use, the orders
// S/4HANA holds as open (not completed), each row mapped to the state an event's read would give, and the orders
// the portal holds as open, which a sweep reads by key when S/4HANA's open list no longer names them.
import type { Executor } from '../../db/transaction.js';
import type { ApiVersion } from '../../s4/odataService.js';
import type { FamilyCollection } from '../familyModule.js';
import { toSalesOrder } from './entity.js';
import { odataV2, odataV4 } from './services.js';
import { type PortalOrder, toPortalOrder } from './state.js';

export function salesOrderCollection(version: ApiVersion): FamilyCollection<PortalOrder> {
  const service = version === 'v4' ? odataV4 : odataV2;
  return {
    service,
    openFilter: "OverallSDProcessStatus ne 'C'",
    map: (entity, key) => toPortalOrder(toSalesOrder(entity, key, service.time), new Date()),
  };
}

/** The orders the portal shows as open, as the view portal_open_orders counts them. */
export async function openOrderKeys(db: Executor): Promise<string[]> {
  const { rows } = await db.query<{ key: string }>(
    `select sales_order as "key" from portal_order_status where portal_status not in ('Delivered', 'Rejected')`,
  );
  return rows.map((row) => row.key);
}
