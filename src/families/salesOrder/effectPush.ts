// How the order effect's statement queues the order's state in the push outbox (src/portal/pushOutbox.ts), and
// withdraws a pending state that changed back to the one the portal holds.
import { SET_STATE_FROM_EXCLUDED, STATE_COLUMNS, shownOf } from './state.js';

// A state that may be withdrawn: pending, never tried since the state last pushed was booked (no claim since,
// so no push of it can have reached the portal, not even one that timed out), and S/4HANA's new state shows
// what that push showed. The portal holds it already: nothing is sent.
const CHANGED_BACK = `p.state = 'pending' and p.claims = p.pushed_claim
  and ${shownOf('p', 'pushed_')} is not distinct from ${shownOf('excluded')}`;

/**
 * The effect's step that queues a push, as a common table expression `pushed` taking its row from `portal`
 * (the portal upsert, which returns the order's state only when it became the portal's) and `pushId`, the new
 * state's Idempotency-Key. A state the row holds already (the one queued, or the one last pushed when done)
 * queues nothing; a state changed back to the one last pushed withdraws a pending state never tried
 * (CHANGED_BACK); any other state replaces a pending one, or follows one in flight. `queued` says which.
 */
export function queuePushSql(pushId: string): string {
  return `pushed as (
    insert into portal_push as p (sales_order, ${STATE_COLUMNS}, push_id)
    select sales_order, ${STATE_COLUMNS}, ${pushId} from portal
    on conflict (sales_order) do update set ${SET_STATE_FROM_EXCLUDED},
      push_id = excluded.push_id,
      state = case when ${CHANGED_BACK} then 'done' else 'pending' end,
      result = case when ${CHANGED_BACK} then 'withdrawn' end,
      done_at = case when ${CHANGED_BACK} then now() end,
      attempts = 0,
      next_attempt_at = now(),
      last_error = null,
      pending_since = case when p.state = 'pending' then p.pending_since else now() end
    where ${shownOf('p')} is distinct from ${shownOf('excluded')}
    returning p.state = 'pending' as queued
  )`;
}
