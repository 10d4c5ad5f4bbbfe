// What sets an order's timeline (GET /api/orders/{salesOrder}/timeline) apart: its key column, its state in the
// outboxes, what a read saw and why it was or was not a change to notify.
import { STALE, type TimelineFamily } from '../../http/timeline.js';

export const ORDER_TIMELINE: TimelineFamily<{
  portalStatus: string;
  requestedDeliveryDate: string | null;
  lastChangeDateTime: Date | null;
}> = {
  column: 'sales_order',
  state: `portal_status as "portalStatus",
          to_char(requested_delivery_date, 'YYYY-MM-DD') as "requestedDeliveryDate"`,
  read: (row) =>
    row.readStatus === null
      ? null
      : {
          portalStatus: row.readStatus,
          requestedDeliveryDate: row.readDate,
          lastChangeDateTime: row.readChangedAt,
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
