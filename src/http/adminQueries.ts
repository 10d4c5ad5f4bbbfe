// The admin API's SQL: reads across the tables, and the one operator write on the outbox (a retry).
// Dates are formatted in SQL: pg would turn a `date` into a local-midnight Date object.
import type { Executor } from '../db/transaction.js';
import { type Requeued, requeue } from '../leasedOutbox/requeue.js';
import { outboxBacklog } from '../notifications/mailOutbox.js';
import { pushBacklog } from '../portal/pushOutbox.js';
import type { FamilyAdmin } from './familyAdmin.js';

export async function eventHistory(db: Executor, source: string, id: string) {
  const [processed, attempt, deadLetters] = await Promise.all([
    db.query(
      `select type, family, key, outcome, payload_hash as "payloadHash", processed_at as "processedAt"
       from processed_event where source = $1::text and id = $2::text`,
      [source, id],
    ),
    db.query(
      `select attempts, last_error as "lastError", first_seen_at as "firstSeenAt", last_seen_at as "lastSeenAt"
       from event_attempt where source = $1::text and id = $2::text`,
      [source, id],
    ),
    db.query(
      `select id::text as "id", channel, reason, received_at as "receivedAt", replayed_at as "replayedAt"
       from dead_letter where source = $1::text and event_id = $2::text order by id desc`,
      [source, id],
    ),
  ]);
  if (processed.rowCount === 0 && attempt.rowCount === 0 && deadLetters.rowCount === 0) return null;
  return {
    source,
    id,
    processed: processed.rows[0] ?? null,
    attempt: attempt.rows[0] ?? null,
    deadLetters: deadLetters.rows,
  };
}

/**
 * Counted afresh on every call: a running counter drifts from the tables it describes. The families add their
 * own counts (FamilyAdmin.summary).
 */
export async function summary(db: Executor, families: readonly FamilyAdmin[]) {
  const [outbox, deadLetters, mailWaiting, pushWaiting, ...familyCounts] = await Promise.all([
    db.query<{ state: string; count: number }>(
      `select state, count(*)::int as "count" from mail_outbox group by state`,
    ),
    db.query<{ count: number }>(`select count(*)::int as "count" from dead_letter where replayed_at is null`),
    outboxBacklog(db),
    pushBacklog(db),
    ...families.map((family) => family.summary?.(db) ?? {}),
  ]);
  const outboxByState: Record<string, number> = { pending: 0, parked: 0, sent: 0 };
  for (const row of outbox.rows) outboxByState[row.state] = row.count;
  return {
    ...Object.assign({}, ...familyCounts),
    outboxByState,
    deadLettersNotReplayed: deadLetters.rows[0]?.count ?? 0,
    /** What each outbox still holds and how long its oldest pending row has waited, as /health tells it. */
    backlog: { mail: mailWaiting, portalPush: pushWaiting },
  };
}

/**
 * Mail that needs an operator's eye: parked, or still pending after a failed attempt, each with its family, key
 * and what it says. Newest first.
 */
export async function mailNeedingAttention(db: Executor, limit: number, offset: number) {
  const { rows } = await db.query(
    `select id::text as "id", family, key, content, state, attempts, created_at as "createdAt",
            next_attempt_at as "nextAttemptAt", last_error as "lastError", message_id as "messageId", change,
            locale, in_reply_to as "inReplyTo"
     from mail_outbox
     where state = 'parked' or (state = 'pending' and last_error is not null)
     order by created_at desc, id desc limit $1::int offset $2::int`,
    [limit, offset],
  );
  return rows;
}

/**
 * Puts a parked or failing mail back in line. A pending mail may be mid-send under its lease (its
 * next_attempt_at), which this moves to now: retrying it then can send it twice, with the same Message-ID.
 */
export function retryMail(db: Executor, id: string): Promise<Requeued<'sent'>> {
  const of = { table: 'mail_outbox', key: ['id'], done: 'sent', identity: 'message_id' } as const;
  return requeue(db, of, [id]);
}

export async function listDeadLetters(db: Executor, limit: number, offset: number) {
  const { rows } = await db.query(
    `select id::text as "id", channel, reason, source, event_id as "eventId", content_type as "contentType",
            octet_length(body) as "bodyBytes", received_at as "receivedAt", replayed_at as "replayedAt"
     from dead_letter order by id desc limit $1::int offset $2::int`,
    [limit, offset],
  );
  return rows;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function readDeadLetter(db: Executor, id: string) {
  const { rows } = await db.query<{ body: Buffer } & Record<string, unknown>>(
    `select id::text as "id", channel, reason, source, event_id as "eventId", content_type as "contentType",
            attributes, headers, body, received_at as "receivedAt", replayed_at as "replayedAt"
     from dead_letter where id = $1::bigint`,
    [id],
  );
  const row = rows[0];
  if (row === undefined) return null;
  const { body, ...rest } = row;
  try {
    return { ...rest, bodyEncoding: 'utf8', body: utf8.decode(body) };
  } catch {
    return { ...rest, bodyEncoding: 'base64', body: body.toString('base64') };
  }
}
