// What the fleet portal is told of an order: `PUT <portal>/orders/<salesOrder>` with the order's absolute values,
// so a repeated PUT (same Idempotency-Key) is harmless. Pure; the push outbox sends it.
import type { PortalPush } from '../../portal/pushOutbox.js';

/** The body of the PUT: the contract, field for field. */
export interface PortalBody {
  salesOrder: string;
  portalStatus: string;
  requestedDeliveryDate: string | null;
  soldToParty: string | null;
  customerReference: string | null;
  s4ChangedAt: string | null;
}

/** The resource's path below the portal's base URL, the key encoded. */
export function orderPath(salesOrder: string): string {
  return `/orders/${encodeURIComponent(salesOrder)}`;
}

export function portalBody(push: PortalPush): PortalBody {
  return {
    salesOrder: push.salesOrder,
    portalStatus: push.portalStatus,
    requestedDeliveryDate: push.requestedDeliveryDate,
    soldToParty: push.soldToParty,
    customerReference: push.customerReference,
    s4ChangedAt: push.s4ChangedAt === null ? null : push.s4ChangedAt.toISOString(),
  };
}
