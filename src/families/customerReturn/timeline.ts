// What sets a warranty case's timeline (GET /api/returns/{customerReturn}/timeline) apart: its family, its
// state in the outboxes, what a read saw and why it was or was not a change to notify.
import { contentOf } from '../../db/content.js';
import { STALE, type TimelineFamily } from '../../http/timeline.js';

export const RETURN_TIMELINE: TimelineFamily<{ caseStatus: string; lastChangeDateTime: Date | null }> = {
  family: 'customerReturn',
  state: `content->>'caseStatus' as "caseStatus"`,
  read: (seen) => {
    // As effect.ts records it.
    const read = contentOf('the read of a customer return', seen);
    const changedAt = read.optionalText('changedAt');
    return {
      caseStatus: read.text('caseStatus'),
      lastChangeDateTime: changedAt === null ? null : new Date(changedAt),
    };
  },
  reasons: {
    new: {
      realChange: true,
      reason: 'the first state of this warranty case: the fleet manager is told of it',
    },
    changed: { realChange: true, reason: 'the case status differs from the status last notified' },
    unchanged: { realChange: false, reason: 'the case status is the one already notified' },
    stale: STALE,
  },
};
