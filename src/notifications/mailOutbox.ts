// The mail outbox's SQL. A claimed row is leased, not locked: claiming moves its next_attempt_at a short lease
// ahead, and the sender renews the lease while the send is in progress, so no transaction stays open during
// SMTP, and a crash mid-send lets the lease run out within seconds and another instance (or this one,
// restarted) send it again with the same Message-ID. Emails of one conversation (a family and key: an order, a
// warranty case) go out in outbox order: only the oldest unsent email of a conversation is ever claimable.

import type { Pool } from 'pg';
import { deleteOldest } from '../db/deleteOldest.js';
import { type Executor, withTransaction } from '../db/transaction.js';
import { type Backlog, readBacklog } from '../leasedOutbox/backlog.js';

/** An email as claimed: the family that renders it, the document it is about, and what it says. */
export interface ClaimedMail {
  id: string;
  /** The family (ParsedEvent.family of the events that queued it): it renders the content and validates it. */
  family: string;
  /** What the email is about in its family: emails of one family and key are one conversation. */
  key: string;
  /** What the email says, as its family wrote it in the effect's transaction. */
  content: unknown;
  recipients: string[];
  messageId: string;
  attempts: number;
  /** 'new': the conversation's first email; 'changed': a later one; null: queued before that was kept. */
  change: 'new' | 'changed' | null;
  /** The recipients' language, fixed when queued; null for emails queued before it was. */
  locale: string | null;
  /** The Message-ID of the conversation's first email; null for that first email. */
  inReplyTo: string | null;
  /** The span that queued it (W3C traceparent), or null when that was not traced. */
  traceParent: string | null;
  /** When claimed, a newer email of its conversation was pending behind it: claimable once this one is booked. */
  nextPending: boolean;
}

// Both probes of a conversation walk mail_outbox_pending_order in its own order (family, key, id) from a row value:
// the oldest pending email at or after the candidate's conversation, and the first pending email after the claimed
// one, which is of the same conversation only if a newer email of it waits. No other index gives that order, so
// the plan cannot read another, whatever the statistics: asked as `min(id)` or `exists` of the conversation, both
// can be planned, on statistics taken while the outbox looked small, as walks of the primary key or of the unsent
// rows, one pass over the whole backlog per email claimed. A scalar subquery, not NOT EXISTS, which PostgreSQL
// turns into an anti join and can plan as a loop over every pending row for each candidate.
export const CLAIM_DUE = `update mail_outbox m
     set attempts = m.attempts + 1, next_attempt_at = now() + make_interval(secs => $2::int),
       leased_by = $3::text
     from (
       select id from mail_outbox candidate
       where state = 'pending' and next_attempt_at <= now()
         and id = (
           select oldest.id from mail_outbox oldest
           where oldest.state = 'pending' and (oldest.family, oldest.key) >= (candidate.family, candidate.key)
           order by oldest.family, oldest.key, oldest.id
           limit 1
         )
       order by next_attempt_at, id
       limit $1::int
       for update skip locked
     ) due
     where m.id = due.id
     returning m.id::text as "id", m.family, m.key, m.content, m.recipients, m.message_id as "messageId",
       m.attempts, m.change, m.locale, m.in_reply_to as "inReplyTo", m.trace_parent as "traceParent",
       coalesce((
         select (newer.family, newer.key) = (m.family, m.key) from mail_outbox newer
         where newer.state = 'pending' and (newer.family, newer.key, newer.id) > (m.family, m.key, m.id)
         order by newer.family, newer.key, newer.id
         limit 1
       ), false) as "nextPending"`;

/**
 * Claims up to `limit` due emails, each the oldest pending email of its conversation: a conversation whose older
 * email is leased elsewhere, waits for a retry or is being claimed by another instance right now (its row is
 * locked, and still pending in this snapshot) is skipped as a whole, so no email overtakes an older one of it.
 * Parked emails are not pending and hold nothing back. `attempts`, counted up here, identifies this claim;
 * `holder` (the claiming instance, src/leasedOutbox/leaseHolder.ts) is recorded on each row as `leased_by`.
 */
export function claimDue(
  pool: Pool,
  limit: number,
  leaseSeconds: number,
  holder: string | null = null,
): Promise<ClaimedMail[]> {
  return withTransaction(pool, (tx) => claimDueInTransaction(tx, limit, leaseSeconds, holder));
}

// The claim's plan is fixed: walk the due index in order, probe each candidate's conversation, stop at the limit.
// An outbox's statistics lag its backlog (a new deployment's table was never analyzed; an outage's backlog grows
// faster than autovacuum analyzes), and from them PostgreSQL planned to read and sort every due email at every
// claim, and kept that plan on the connection while the backlog grew.
const INDEX_PLAN = `select set_config('enable_sort', 'off', true), set_config('enable_seqscan', 'off', true),
  set_config('enable_bitmapscan', 'off', true), set_config('enable_hashjoin', 'off', true)`;

/** claimDue inside a transaction the caller holds open: the claim's rows stay locked until it ends. */
export async function claimDueInTransaction(
  tx: Executor,
  limit: number,
  leaseSeconds: number,
  holder: string | null = null,
): Promise<ClaimedMail[]> {
  await tx.query({ name: 'index-plan', text: INDEX_PLAN });
  // Named, as the event path's statements are: prepared once per connection, then only bound and executed.
  const { rows } = await tx.query<ClaimedMail>({
    name: 'claim-due-mail',
    text: CLAIM_DUE,
    values: [limit, leaseSeconds, holder],
  });
  return rows;
}

export interface Lease {
  id: string;
  /** The claim's `attempts`: a lease that ran out and was claimed again has a higher one. */
  attempts: number;
}

/**
 * Extends the leases of emails still being sent, one statement for all of them. Returns the ids whose lease
 * this claim still holds: one missing ran out and was claimed again elsewhere (or is no longer pending).
 */
export async function renewLeases(db: Executor, leases: Lease[], leaseSeconds: number): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>(
    `update mail_outbox m set next_attempt_at = now() + make_interval(secs => $3::int)
     from unnest($1::bigint[], $2::int[]) as held(id, attempts)
     where m.id = held.id and m.attempts = held.attempts and m.state = 'pending'
     returning m.id::text as "id"`,
    [leases.map((lease) => lease.id), leases.map((lease) => lease.attempts), leaseSeconds],
  );
  return new Set(rows.map((row) => row.id));
}

export const MARK_SENT = `update mail_outbox set state = 'sent', sent_at = now(), last_error = null
     where id = any($1::bigint[])`;

/** Records emails as sent, one statement for all of them. */
export async function markSent(db: Executor, ids: string[]): Promise<void> {
  await db.query({ name: 'mark-mail-sent', text: MARK_SENT, values: [ids] });
}

export async function scheduleRetry(
  db: Executor,
  id: string,
  delaySeconds: number,
  error: string,
): Promise<void> {
  await db.query(
    `update mail_outbox set next_attempt_at = now() + make_interval(secs => $2::double precision), last_error = $3::text
     where id = $1::bigint`,
    [id, delaySeconds, error],
  );
}

/** Gives up on a mail until an operator retries it through the admin API. */
export async function park(db: Executor, id: string, error: string): Promise<void> {
  await db.query(`update mail_outbox set state = 'parked', last_error = $2::text where id = $1::bigint`, [
    id,
    error,
  ]);
}

export type OutboxBacklog = Backlog;

/** Unsent mail only, never the sent rows kept for MAIL_RETENTION_DAYS. */
export function outboxBacklog(db: Executor, timeoutMs?: number): Promise<OutboxBacklog> {
  return readBacklog(db, { table: 'mail_outbox', pendingSince: 'created_at', done: 'sent' }, timeoutMs);
}

/** Retention: sent mail older than the mail window. Pending and parked mail never expires: it has not reached anyone yet. */
export const EXPIRED_SENT_MAILS = deleteOldest('mail_outbox', 'sent_at', `state = 'sent' and `);
