import type { SalesOrder } from './entity.js';

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

// An order's state as portal_order_status holds it.
/** The values the portal shows: a change of any of them is a change the portal must be told of. */
const SHOWN_COLUMNS = [
  'portal_status',
  'requested_delivery_date',
  'sold_to_party',
  'customer_reference',
] as const;

/** The shown values and when S/4HANA last changed them, as a column list. */
export const STATE_COLUMNS = [...SHOWN_COLUMNS, 's4_changed_at'].join(', ');

/** The `set` items of an upsert that takes the state of the row it proposed. */
export const SET_STATE_FROM_EXCLUDED = [...SHOWN_COLUMNS, 's4_changed_at']
  .map((column) => `${column} = excluded.${column}`)
  .join(', ');
