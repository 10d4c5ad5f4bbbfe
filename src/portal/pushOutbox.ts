// The portal push outbox's SQL (table portal_push, one row per family and key: an order, a warranty case). Each
// family's effect queues a state, the body of its PUT, in its own transaction; the sender claims due rows under a
// lease, renews it while the portal answers, and books the answer only for the claim it holds. A booking that
// finds a newer state queued meanwhile (another push_id) leaves the row pending and frees it at once: the row
// goes again with the newer state. A booking done also records the body as the one the portal holds
// (pushed_content), which a family's effect may compare a change back with.
import type { Executor } from '../db/transaction.js';
import { type Backlog, readBacklog } from '../leasedOutbox/backlog.js';
import { type Requeued, requeue } from '../leasedOutbox/requeue.js';

/** A push as claimed: the family and key of its document, and the body its family wrote. */
export interface ClaimedPush {
  /** The family (ParsedEvent.family of the events that queued it): it says where the body goes. */
  family: string;
  key: string;
  /** The state to push, as its family wrote it in the effect's transaction: the PUT's body. */
  content: unknown;
  /** The Idempotency-Key of this state's push. */
  pushId: string;
  attempts: number;
  /** Identifies this claim: a lease that ran out and was claimed again has a higher one. */
  claims: number;
}

const PUSH_COLUMNS = `p.family, p.key, p.content, p.push_id::text as "pushId"`;

/** One row's name among every family's: what the sender's loop and the lease renewal know a push by. */
export function pushKeyOf(push: Pick<ClaimedPush, 'family' | 'key'>): string {
  return `${push.family}/${push.key}`;
}

/**
 * Claims up to `limit` due pushes whose document has no push in flight (its lease ran out or was freed). Rows
 * another instance is claiming right now are skipped, so two instances never hold one document at once. `holder`
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
       select family, key from portal_push
       where state = 'pending' and next_attempt_at <= now() and (leased_until is null or leased_until <= now())
       order by next_attempt_at
       limit $1::int
       for update skip locked
     ) due
     where p.family = due.family and p.key = due.key
     returning ${PUSH_COLUMNS}, p.attempts, p.claims`,
    [limit, leaseSeconds, holder],
  );
  return rows;
}

export type PushClaim = Pick<ClaimedPush, 'family' | 'key' | 'claims' | 'pushId'>;

/** Extends the leases of pushes still waiting for the portal. Returns those still held, by pushKeyOf. */
export async function renewPushLeases(
  db: Executor,
  claims: PushClaim[],
  leaseSeconds: number,
): Promise<Set<string>> {
  const { rows } = await db.query<{ family: string; key: string }>(
    `update portal_push p set leased_until = now() + make_interval(secs => $4::int)
     from unnest($1::text[], $2::text[], $3::int[]) as held(family, key, claims)
     where p.family = held.family and p.key = held.key and p.claims = held.claims and p.state = 'pending'
     returning p.family, p.key`,
    [
      claims.map((claim) => claim.family),
      claims.map((claim) => claim.key),
      claims.map((claim) => claim.claims),
      leaseSeconds,
    ],
  );
  return new Set(rows.map(pushKeyOf));
}

export type Booking =
  | { kind: 'done'; result: 'pushed' | 'conflict' }
  | { kind: 'retry'; delaySeconds: number; error: string }
  | { kind: 'parked'; error: string };

// The booking is of the state the claim pushed only if no newer one was queued meanwhile (the same push_id).
const SAME = `p.push_id = $3::uuid`;
const DONE = `${SAME} and $4::text = 'done'`;
// What the portal now holds, for the next effect to compare with: this state, booked done by this claim.
const RECORD_PUSHED = `pushed_content = case when ${DONE} then p.content else p.pushed_content end,
       pushed_claim = case when ${DONE} then p.claims else p.pushed_claim end`;

/**
 * Books how a claim's push ended and frees the row. If a newer state was queued while the push was in flight
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
     where p.family = $1::text and p.key = $8::text and p.claims = $2::int`,
    [
      claim.family,
      claim.claims,
      claim.pushId,
      booking.kind === 'done' ? 'done' : booking.kind === 'parked' ? 'parked' : 'pending',
      booking.kind === 'done' ? booking.result : null,
      booking.kind === 'retry' ? booking.delaySeconds : 0,
      booking.kind === 'done' ? null : booking.error,
      claim.key,
    ],
  );
  return rowCount === 1;
}

export type PushBacklog = Backlog;

export function pushBacklog(db: Executor, timeoutMs?: number): Promise<PushBacklog> {
  return readBacklog(db, { table: 'portal_push', pendingSince: 'pending_since', done: 'done' }, timeoutMs);
}

/**
 * Pushes that need an operator's eye: parked, or pending after a failed attempt, each with its family and key (what
 * a retry names) and the state it pushes. Longest waiting first.
 */
export async function pushesNeedingAttention(db: Executor, limit: number, offset: number) {
  const { rows } = await db.query(
    `select p.family, p.key, p.content, p.push_id::text as "pushId", p.state, p.attempts,
            p.next_attempt_at as "nextAttemptAt", p.last_error as "lastError", p.pending_since as "pendingSince"
     from portal_push p
     where p.state = 'parked' or (p.state = 'pending' and p.last_error is not null)
     order by p.pending_since, p.family, p.key limit $1::int offset $2::int`,
    [limit, offset],
  );
  return rows;
}

/**
 * Puts the parked or failing push of a family's key back in line with the same Idempotency-Key: it is the same
 * state. A lease in force (leased_until) is kept, so a push in flight is not doubled.
 */
export function retryPush(db: Executor, family: string, key: string): Promise<Requeued<'done'>> {
  const of = { table: 'portal_push', key: ['family', 'key'], done: 'done', identity: 'push_id' } as const;
  return requeue(db, of, [family, key]);
}
