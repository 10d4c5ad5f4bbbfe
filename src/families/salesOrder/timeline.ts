// What sets an order's timeline (GET /api/orders/{salesOrder}/timeline) apart: its family, its state in the
// outboxes, what a read saw and why it was or was not a change to notify.
import { contentOf } from '../../db/content.js';
import { STALE, type TimelineFamily } from '../../http/timeline.js';

export const ORDER_TIMELINE: TimelineFamily<{
  portalStatus: string;
  requestedDeliveryDate: string | null;
  lastChangeDateTime: Date | null;
}> = {
  family: 'salesOrder',
  state: `content->>'portalStatus' as "portalStatus", content->>'requestedDeliveryDate' as "requestedDeliveryDate"`,
  read: (seen) => {
    // As effect.ts records it.
    const read = contentOf('the read of an order', seen);
    const changedAt = read.optionalText('changedAt');
    return {
      portalStatus: read.text('portalStatus'),
      requestedDeliveryDate: read.optionalDate('requestedDeliveryDate'),
      lastChangeDateTime: changedAt === null ? null : new Date(changedAt),
    };
  },
  reasons: {
    new: { realChange: true, reason: 'the first state of this order: the fleet manager is told of it' },
    changed: {
      realChange: true,
      reason: 'status or requested delivery date differ from the pair last notified',
    },
    unchanged: {
      realChange: false,
      reason: 'status and requested delivery date are the pair already notified',
    },
    stale: STALE,
  },
};
