// What the admin API knows of a customer return (GET /api/returns/{customerReturn}): its warranty case with the
// notification ledger, its emails (never their addresses), its portal push and its processed events, newest first.
// A tombstone (a Deleted event of a return no case was opened for) is no case: the return shows its events only.
import type { Executor } from '../../db/transaction.js';

/** Most rows of each history an overview returns, newest first. */
const HISTORY_LIMIT = 100;

export async function returnOverview(db: Executor, customerReturn: string) {
  const [kase, mails, push, events] = await Promise.all([
    db.query(
      `select source_system as "sourceSystem", case_status as "caseStatus", sold_to_party as "soldToParty",
              customer_reference as "customerReference", sales_order as "salesOrder",
              return_reasons as "returnReasons", s4_changed_at as "s4ChangedAt", s4_read_at as "s4ReadAt",
              updated_at as "updatedAt", notified_case_status as "notifiedCaseStatus",
              previous_notified_case_status as "previousNotifiedCaseStatus",
              thread_message_id as "threadMessageId", notified_at as "notifiedAt"
       from warranty_case where customer_return = $1::text and opened`,
      [customerReturn],
    ),
    db.query(
      `select id::text as "id", content->>'caseStatus' as "caseStatus",
              content->>'previousCaseStatus' as "previousCaseStatus", change, state, attempts, created_at as "createdAt", sent_at as "sentAt",
              next_attempt_at as "nextAttemptAt", last_error as "lastError", message_id as "messageId", locale,
              in_reply_to as "inReplyTo"
       from mail_outbox where family = 'customerReturn' and key = $1::text order by id desc limit $2::int`,
      [customerReturn, HISTORY_LIMIT],
    ),
    db.query(
      `select content->>'caseStatus' as "caseStatus", (content->>'s4ChangedAt')::timestamptz as "s4ChangedAt",
              push_id::text as "pushId", state, result, attempts, last_error as "lastError",
              pending_since as "pendingSince", done_at as "doneAt"
       from portal_push where family = 'customerReturn' and key = $1::text`,
      [customerReturn],
    ),
    db.query(
      `select source, id, type, outcome, notification, processed_at as "processedAt" from processed_event
       where family = 'customerReturn' and key = $1::text order by processed_at desc limit $2::int`,
      [customerReturn, HISTORY_LIMIT],
    ),
  ]);
  if (kase.rowCount === 0 && mails.rowCount === 0 && events.rowCount === 0) return null;
  return {
    customerReturn,
    // One case per source system: a return number is unique within its S/4HANA only.
    cases: kase.rows,
    mails: mails.rows,
    push: push.rows[0] ?? null,
    events: events.rows,
  };
}
