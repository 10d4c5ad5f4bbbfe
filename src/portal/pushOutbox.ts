// The portal push outbox's SQL (table portal_push, one row per order or warranty case). Each family's effect
// queues a state in its own transaction (src/families/salesOrder/effectPush.ts, customerReturn/effect.ts);
// the sender claims due rows under a lease, renews it while the portal answers, and books the answer only for
// the claim it holds. A booking that finds a newer state queued meanwhile (another push_id) leaves the row
// pending and frees it at once: the row goes again with the newer state. A booking done also records an
// order's state as the one the portal holds (pushed_*), which the order effect compares a change back with.
import type { Executor } from '../db/transaction.js';
import { type Backlog, readBacklog } from '../leasedOutbox/backlog.js';
import { type Requeued, requeue } from '../leasedOutbox/requeue.js';
import { SHOWN_COLUMNS } from './shownColumns.js';

/** An order's push, or (kind `warranty_case`) a case's: what the portal API puts where. */
export type ClaimedPush = PortalPush | CasePush;

export interface PortalPush {
  kind?: 'order';
  /** The row's key whatever its kind: `orders/<salesOrder>` or `warranty-cases/<customerReturn>`. */
  resource: string;
  salesOrder: string;
  portalStatus: string;
  requestedDeliveryDate: string | null;
  soldToParty: string | null;
  customerReference: string | null;
  s4ChangedAt: Date | null;
  /** The Idempotency-Key of this state's push. */
  pushId: string;
  attempts: number;
  /** Identifies this claim: a lease that ran out and was claimed again has a higher one. */
  claims: number;
}

/** A warranty case's push: the order's columns give way to the case's. */
export interface CasePush
  extends Pick<
    PortalPush,
    'resource' | 'soldToParty' | 'customerReference' | 's4ChangedAt' | 'pushId' | 'attempts' | 'claims'
  > {
  kind: 'warranty_case';
  customerReturn: string;
  caseStatus: string;
  /** The sales order the return refers to, if any. */
  salesOrder: string | null;
  returnReasons: string[];
}

const PUSH_COLUMNS = `p.resource, p.kind, coalesce(p.sales_order, p.case_sales_order) as "salesOrder",
  p.customer_return as "customerReturn", p.case_status as "caseStatus", p.return_reasons as "returnReasons",
  p.portal_status as "portalStatus",
  to_char(p.requested_delivery_date, 'YYYY-MM-DD') as "requestedDeliveryDate", p.sold_to_party as "soldToParty",
  p.customer_reference as "customerReference", p.s4_changed_at as "s4ChangedAt", p.push_id::text as "pushId"`;

/**
 * Claims up to `limit` due pushes whose order has no push in flight (its lease ran out or was freed). Rows
 * another instance is claiming right now are skipped, so two instances never hold one order at once. `holder`
 * (the claiming instance) is recorded on each row as `leased_by`.
 */
export async function claimDuePushes(
  db: Executor,
  limit: number,
  leaseSeconds: number,
  holder: string | null = null,
): Promise<ClaimedPush[]> {
  const { rows } = await db.query<ClaimedPush>(
    `update portal_push p set attempts = p.attempts + 1, claims = p.claims + 1,
       leased_until = now() + make_interval(secs => $2::int), leased_by = $3::text
     from (
       select resource from portal_push
       where state = 'pending' and next_attempt_at <= now() and (leased_until is null or leased_until <= now())
       order by next_attempt_at
       limit $1::int
       for update skip locked
     ) due
     where p.resource = due.resource
     returning ${PUSH_COLUMNS}, p.attempts, p.claims`,
    [limit, leaseSeconds, holder],
  );
  return rows;
}

export type PushClaim = Pick<ClaimedPush, 'resource' | 'claims' | 'pushId'>;

/** Extends the leases of pushes still waiting for the portal. Returns the resources whose lease is still held. */
export async function renewPushLeases(
  db: Executor,
  claims: PushClaim[],
  leaseSeconds: number,
): Promise<Set<string>> {
  const { rows } = await db.query<{ resource: string }>(
    `update portal_push p set leased_until = now() + make_interval(secs => $3::int)
     from unnest($1::text[], $2::int[]) as held(resource, claims)
     where p.resource = held.resource and p.claims = held.claims and p.state = 'pending'
     returning p.resource`,
    [claims.map((claim) => claim.resource), claims.map((claim) => claim.claims), leaseSeconds],
  );
  return new Set(rows.map((row) => row.resource));
}

export type Booking =
  | { kind: 'done'; result: 'pushed' | 'conflict' }
  | { kind: 'retry'; delaySeconds: number; error: string }
  | { kind: 'parked'; error: string };

// The booking is of the state the claim pushed only if no newer one was queued meanwhile (the same push_id).
const SAME = `p.push_id = $3::uuid`;
const DONE = `${SAME} and $4::text = 'done'`;
// What the portal now holds, for the next effect to compare with: this state, booked done by this claim.
const RECORD_PUSHED = [
  ...SHOWN_COLUMNS.map(
    (column) => `pushed_${column} = case when ${DONE} then p.${column} else p.pushed_${column} end`,
  ),
  `pushed_claim = case when ${DONE} then p.claims else p.pushed_claim end`,
].join(', ');

/**
 * Books how a claim's push ended and frees the order. If a newer state was queued while the push was in flight
 * (the push_id changed) the row stays pending and due now. Returns false when the claim no longer held the row
 * (its lease ran out and another claim took it): nothing is booked then.
 */
export async function bookPush(db: Executor, claim: PushClaim, booking: Booking): Promise<boolean> {
  const { rowCount } = await db.query(
    `update portal_push p set
       leased_until = null,
       state = case when ${SAME} then $4::text else p.state end,
       result = case when ${SAME} then $5::text else p.result end,
       done_at = case when ${DONE} then now() else p.done_at end,
       next_attempt_at = case when ${SAME} then now() + make_interval(secs => $6::double precision)
                              else p.next_attempt_at end,
       last_error = case when ${SAME} then $7::text else p.last_error end,
       ${RECORD_PUSHED}
     where p.resource = $1::text and p.claims = $2::int`,
    [
      claim.resource,
      claim.claims,
      claim.pushId,
      booking.kind === 'done' ? 'done' : booking.kind === 'parked' ? 'parked' : 'pending',
      booking.kind === 'done' ? booking.result : null,
      booking.kind === 'retry' ? booking.delaySeconds : 0,
      booking.kind === 'done' ? null : booking.error,
    ],
  );
  return rowCount === 1;
}

export type PushBacklog = Backlog;

export function pushBacklog(db: Executor, timeoutMs?: number): Promise<PushBacklog> {
  return readBacklog(db, { table: 'portal_push', pendingSince: 'pending_since', done: 'done' }, timeoutMs);
}

/** Pushes that need an operator's eye: parked, or pending after a failed attempt. Longest waiting first. */
export async function pushesNeedingAttention(db: Executor, limit: number, offset: number) {
  const { rows } = await db.query(
    `select ${PUSH_COLUMNS}, p.state, p.attempts, p.next_attempt_at as "nextAttemptAt",
            p.last_error as "lastError", p.pending_since as "pendingSince"
     from portal_push p
     where p.state = 'parked' or (p.state = 'pending' and p.last_error is not null)
     order by p.pending_since, p.sales_order limit $1::int offset $2::int`,
    [limit, offset],
  );
  return rows;
}

/**
 * Puts a parked or failing push back in line with the same Idempotency-Key: it is the same state. A lease in
 * force (leased_until) is kept, so a push in flight is not doubled.
 */
export function retryPush(
  db: Executor,
  key: string,
  /** An order's push by its sales order, a warranty case's by its customer return. */
  by: 'sales_order' | 'customer_return' = 'sales_order',
): Promise<Requeued<'done'>> {
  const of = { table: 'portal_push', key: by, done: 'done', identity: 'push_id' } as const;
  return requeue(db, of, key);
}
