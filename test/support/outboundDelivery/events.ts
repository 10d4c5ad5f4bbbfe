// The outbound-delivery events this test family handles, and the delivery each names. Pure: no I/O, never throws.
import { type Failure, fail, show } from '../../../src/events/reasonText.js';

export const DELIVERY_TYPE_PREFIX = 'sap.s4.beh.outbounddelivery.v1.OutboundDelivery.';

/** Every type handled; a deletion reads as not found. */
export const DELIVERY_TYPES: readonly string[] = ['Created.v1', 'Changed.v1', 'Deleted.v1'].map(
  (change) => `${DELIVERY_TYPE_PREFIX}${change}`,
);

/** VBELN: an SD document number, as the API writes it (no leading zeros). */
export const DELIVERY_KEY = /^[1-9]\d{0,9}$/;

export function isDeliveryType(type: string): boolean {
  return type.startsWith(DELIVERY_TYPE_PREFIX);
}

/** The key as every table holds it: `0080000001` is delivery 80000001. */
export function deliveryKey(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const key = raw.trim().replace(/^0+/, '');
  return DELIVERY_KEY.test(key) ? key : undefined;
}

/** The delivery an event's data names, or why the event is refused. */
export function deliveryEvent(type: string, data: unknown): { ok: true; key: string } | Failure {
  if (!DELIVERY_TYPES.includes(type))
    return fail(`event type ${show(type)} is not an outbound-delivery event handled here`);
  const raw =
    typeof data === 'object' && data !== null
      ? (data as Record<string, unknown>).DeliveryDocument
      : undefined;
  const key = deliveryKey(raw);
  return key === undefined
    ? fail(`data.DeliveryDocument must be 1 to 10 digits, got ${show(raw)}`)
    : { ok: true, key };
}
