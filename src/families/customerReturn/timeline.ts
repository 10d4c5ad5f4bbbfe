// What sets a warranty case's timeline (GET /api/returns/{customerReturn}/timeline) apart: its key column, its
// state in the outboxes, what a read saw and why it was or was not a change to notify.
import { STALE, type TimelineFamily } from '../../http/timeline.js';

export const RETURN_TIMELINE: TimelineFamily<{ caseStatus: string; lastChangeDateTime: Date | null }> = {
  column: 'customer_return',
  state: `case_status as "caseStatus"`,
  read: (row) =>
    row.readCaseStatus === null
      ? null
      : { caseStatus: row.readCaseStatus, lastChangeDateTime: row.readChangedAt },
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
