// What sets a delivery's timeline apart: its family, its state in the outboxes, what a read saw.
import { contentOf } from '../../../src/db/content.js';
import { STALE, type TimelineFamily } from '../../../src/http/timeline.js';

export const DELIVERY_TIMELINE: TimelineFamily<{ status: string; lastChangeDateTime: Date | null }> = {
  family: 'outboundDelivery',
  state: `content->>'status' as "status"`,
  read: (seen) => {
    const read = contentOf('the read of an outbound delivery', seen);
    const changedAt = read.optionalText('changedAt');
    return {
      status: read.text('status'),
      lastChangeDateTime: changedAt === null ? null : new Date(changedAt),
    };
  },
  reasons: {
    new: { realChange: true, reason: 'the first state of this delivery: the fleet manager is told of it' },
    changed: { realChange: true, reason: 'the status differs from the status last notified' },
    unchanged: { realChange: false, reason: 'the status is the one already notified' },
    stale: STALE,
  },
};
