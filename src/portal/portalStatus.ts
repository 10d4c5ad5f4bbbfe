import type { Executor } from '../db/transaction.js';
import type { SalesOrder } from '../s4/salesOrder.js';

export type PortalStatus =
  | 'Rejected'
  | 'Delivered'
  | 'PartiallyDelivered'
  | 'DeliveryBlocked'
  | 'InProcess'
  | 'Open';

export interface PortalOrder {
  salesOrder: string;
  portalStatus: PortalStatus;
  requestedDeliveryDate: string | null;
  soldToParty: string | null;
  customerReference: string | null;
  changedAt: Date | null;
  /** When the service read this state from S/4HANA: breaks ties between states with the same changedAt. */
  readAt: Date;
}

/** The portal's status of an order: the first rule that matches. S/4HANA codes: A = not yet, B = partly, C = fully. */
export function portalStatusOf(order: SalesOrder): PortalStatus {
  if (order.rejectionStatus === 'C') return 'Rejected';
  if (order.deliveryStatus === 'C') return 'Delivered';
  if (order.deliveryStatus === 'B') return 'PartiallyDelivered';
  if (order.deliveryBlockReason !== '') return 'DeliveryBlocked';
  if (order.overallSDProcessStatus === 'B') return 'InProcess';
  return 'Open';
}

export function toPortalOrder(order: SalesOrder, readAt: Date): PortalOrder {
  return {
    salesOrder: order.salesOrder,
    portalStatus: portalStatusOf(order),
    requestedDeliveryDate: order.requestedDeliveryDate,
    soldToParty: order.soldToParty,
    customerReference: order.customerReference,
    changedAt: order.changedAt,
    readAt,
  };
}

/**
 * Writes the order's portal row as absolute values, unless the stored state is newer. States are ordered by
 * (LastChangeDateTime, time read): whichever was read later wins between equal change times, because not every
 * status change moves LastChangeDateTime. Returns whether this state is now the portal's.
 * The row lock taken here also serialises the rest of the transaction per order.
 */
export async function upsertPortalStatus(tx: Executor, order: PortalOrder): Promise<boolean> {
  const { rowCount } = await tx.query({
    // Named: prepared once per connection, then only bound and executed.
    name: 'upsert-portal-status',
    text: `insert into portal_order_status as current
       (sales_order, portal_status, requested_delivery_date, sold_to_party, customer_reference, s4_changed_at, s4_read_at)
     values ($1::text, $2::text, $3::date, $4::text, $5::text, $6::timestamptz, $7::timestamptz)
     on conflict (sales_order) do update set
       portal_status = excluded.portal_status,
       requested_delivery_date = excluded.requested_delivery_date,
       sold_to_party = excluded.sold_to_party,
       customer_reference = excluded.customer_reference,
       s4_changed_at = excluded.s4_changed_at,
       s4_read_at = excluded.s4_read_at,
       updated_at = now()
     where (coalesce(excluded.s4_changed_at, '-infinity'), excluded.s4_read_at)
        >= (coalesce(current.s4_changed_at, '-infinity'), current.s4_read_at)`,
    values: [
      order.salesOrder,
      order.portalStatus,
      order.requestedDeliveryDate,
      order.soldToParty,
      order.customerReference,
      order.changedAt,
      order.readAt,
    ],
  });
  return rowCount === 1;
}
