// The one status a delivery has for the fleet manager, from its goods movement. Pure.
import type { OutboundDelivery } from './entity.js';

export type DeliveryStatus = 'Planned' | 'Shipping' | 'Shipped';

export interface DeliveryState {
  deliveryDocument: string;
  status: DeliveryStatus;
  soldToParty: string | null;
  changedAt: Date | null;
  readAt: Date;
}

export function toDeliveryState(delivery: OutboundDelivery, readAt: Date): DeliveryState {
  const status =
    delivery.goodsMovementStatus === 'C'
      ? 'Shipped'
      : delivery.goodsMovementStatus === 'B'
        ? 'Shipping'
        : 'Planned';
  return {
    deliveryDocument: delivery.deliveryDocument,
    status,
    soldToParty: delivery.soldToParty,
    changedAt: delivery.changedAt,
    readAt,
  };
}
