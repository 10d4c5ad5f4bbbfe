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
