// How the order effect's statement queues the order's state in the push outbox (src/portal/pushOutbox.ts), and
// withdraws a pending state that changed back to the one the portal holds.
import { jsonTimestamp } from '../../db/content.js';

// The PUT's body (pushResource.ts) from the portal upsert's row.
const BODY = `jsonb_build_object('salesOrder', sales_order, 'portalStatus', portal_status,
      'requestedDeliveryDate', to_char(requested_delivery_date, 'YYYY-MM-DD'), 'soldToParty', sold_to_party,
      'customerReference', customer_reference, 's4ChangedAt', ${jsonTimestamp('s4_changed_at')})`;

/** A body's values that the portal shows: a change of any of them is a change the portal must be told of. */
const shown = (body: string) => `(${body} - 's4ChangedAt')`;

// A state that may be withdrawn: pending, never tried since the state last pushed was booked (no claim since,
// so no push of it can have reached the portal, not even one that timed out), and S/4HANA's new state shows
// what that push showed. The portal holds it already: nothing is sent.
const CHANGED_BACK = `p.state = 'pending' and p.claims = p.pushed_claim
  and ${shown('p.pushed_content')} is not distinct from ${shown('excluded.content')}`;

/**
 * The effect's step that queues a push, as a common table expression `pushed` taking its row from `portal`
 * (the portal upsert, which returns the order's state only when it became the portal's) and `pushId`, the new
 * state's Idempotency-Key. A state the row holds already (the one queued, or the one last pushed when done)
 * queues nothing; a state changed back to the one last pushed withdraws a pending state never tried
 * (CHANGED_BACK); any other state replaces a pending one, or follows one in flight. `queued` says which.
 */
export function queuePushSql(pushId: string): string {
  return `pushed as (
    insert into portal_push as p (family, key, content, push_id)
    select 'salesOrder', sales_order, ${BODY}, ${pushId} from portal
    on conflict (family, key) do update set content = excluded.content,
      push_id = excluded.push_id,
      state = case when ${CHANGED_BACK} then 'done' else 'pending' end,
      result = case when ${CHANGED_BACK} then 'withdrawn' end,
      done_at = case when ${CHANGED_BACK} then now() end,
      attempts = 0,
      next_attempt_at = now(),
      last_error = null,
      pending_since = case when p.state = 'pending' then p.pending_since else now() end
    where ${shown('p.content')} is distinct from ${shown('excluded.content')}
    returning p.state = 'pending' as queued
  )`;
}
