// What the fleet portal is told of an order: `PUT <portal>/orders/<salesOrder>` with the order's absolute values,
// so a repeated PUT (same Idempotency-Key) is harmless. Pure; the push outbox sends it.
import { contentOf } from '../../db/content.js';
import type { ClaimedPush } from '../../portal/pushOutbox.js';

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

/** The body a claimed row holds (effectPush.ts writes it), checked field by field. */
export function portalBody(push: ClaimedPush): PortalBody {
  const content = contentOf(`portal push of order ${push.key}`, push.content);
  return {
    salesOrder: content.text('salesOrder'),
    portalStatus: content.text('portalStatus'),
    requestedDeliveryDate: content.optionalDate('requestedDeliveryDate'),
    soldToParty: content.optionalText('soldToParty'),
    customerReference: content.optionalText('customerReference'),
    s4ChangedAt: content.optionalText('s4ChangedAt'),
  };
}
