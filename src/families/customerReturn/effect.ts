// The effect of new customer-return events of one return, in one statement, as the sales-order family's effect.ts writes an order's:
// record the events as processed, upsert the warranty case unless the stored state is newer, and move the
// notification ledger and queue one email on a real change of the case's status. A return that is not a
// warranty case is recorded with an outcome that says so, and writes no case. A withdrawal of a return no case
// exists for writes a tombstone (migration 0015): a row that opened no case and is never told of.
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { withClient } from '../../db/checkout.js';
import { jsonTimestamp } from '../../db/content.js';
import { deleteOldest } from '../../db/deleteOldest.js';
import type { EffectMail, EffectResult } from '../../events/effect.js';
import type { ParsedEvent } from '../../events/parsedEvent.js';
import {
  identityValues,
  notificationSql,
  recordProcessedSql,
  unlessRecordedAlready,
} from '../../events/processedRecord.js';
import type { WarrantyCase } from './state.js';

/** A return as read: its case's values, and whether WARRANTY_RETURN_REASONS makes it a warranty case. */
export interface CaseState extends WarrantyCase {
  isCase: boolean;
}

// A withdrawal (the return is gone) knows only the status: the case keeps the values it had.
const DETAILS = ['sold_to_party', 'customer_reference', 'sales_order', 'return_reasons', 's4_changed_at'];
const KEEP_DETAILS_ON_WITHDRAWAL = DETAILS.map(
  (column) =>
    `${column} = case when excluded.case_status = 'Withdrawn' then current.${column} else excluded.${column} end`,
).join(',\n        ');

// `kase` holds the case the upsert wrote, never a tombstone: a tombstone's Deleted event is `not_found`, as an
// order's 404 is.
const OUTCOME = `case when not $15::boolean then 'not_warranty_case'
      when exists (select from kase) then 'applied'
      when $8::text = 'Withdrawn' then 'not_found'
      else 'stale' end`;

// The case's state as the portal is told it, the PUT's body (pushResource.ts), from the upsert's row `k`.
const BODY = `jsonb_build_object('customerReturn', $7::text, 'caseStatus', k.case_status,
        'soldToParty', k.sold_to_party, 'customerReference', k.customer_reference, 'salesOrder', k.sales_order,
        'returnReasons', to_jsonb(k.return_reasons), 's4ChangedAt', ${jsonTimestamp('k.s4_changed_at')})`;

/**
 * With PORTAL_DESTINATION set: queue the case's new state as its one push row (a new Idempotency-Key, $22),
 * unless the row holds that state already, queued or pushed. A newer state replaces a pending one.
 */
const QUEUE_PUSH = `, pushed as (
      insert into portal_push as p (family, key, content, push_id)
      select 'customerReturn', $7::text, ${BODY}, $22::uuid
      from kase k
      on conflict (family, key) do update set content = excluded.content,
        push_id = excluded.push_id, state = 'pending', result = null, done_at = null, attempts = 0,
        next_attempt_at = now(), last_error = null,
        pending_since = case when p.state = 'pending' then p.pending_since else now() end
      where p.content is distinct from excluded.content
      returning 1
    )`;

// A status the fleet manager has not been told of: the ledger moves, stamped with this transaction.
const MOVES = 'current.notified_case_status is distinct from excluded.case_status';

// A row inserted as Withdrawn is a tombstone: it opens no case, so it starts no ledger and no conversation.
const IF_OPENED = (value: string) => `case when o.opened then ${value} end`;

// The ledger moves in the update's SET, which reads the row version the upsert locked, and the statement tells
// from that stamp in RETURNING whether it moved the ledger itself: never from a snapshot, which misses a case
// that a concurrent first event inserted and committed meanwhile. For the same reason a withdrawal always goes
// through the insert: it waits for an uncommitted insert of the same key and then withdraws the committed case,
// or, with no case at all, leaves a tombstone. A return once gone stays withdrawn, tombstone or case: S/4HANA
// never gives its number to another return, so a state read before the deletion and written after it is stale.
function caseEffectSql(pushToPortal: boolean): string {
  return `with upserted as (
      insert into warranty_case as current (source_system, customer_return, case_status, sold_to_party,
        customer_reference, sales_order, return_reasons, s4_changed_at, s4_read_at, opened, notified_case_status,
        thread_message_id, notified_at, notified_by_xact)
      select $21::text, $7::text, $8::text, $9::text, $10::text, $11::text, $12::text[], $13::timestamptz,
             $14::timestamptz, o.opened, ${IF_OPENED('$8::text')}, ${IF_OPENED('$16::text')}, ${IF_OPENED('now()')},
             ${IF_OPENED('pg_current_xact_id()')}
      from (select $8::text <> 'Withdrawn' as opened) o
      where $15::boolean
      on conflict (source_system, customer_return) do update set
        case_status = excluded.case_status,
        ${KEEP_DETAILS_ON_WITHDRAWAL},
        s4_read_at = excluded.s4_read_at,
        updated_at = now(),
        previous_notified_case_status = case
          when ${MOVES} then current.notified_case_status else current.previous_notified_case_status end,
        notified_at = case when ${MOVES} then now() else current.notified_at end,
        notified_by_xact = case when ${MOVES} then pg_current_xact_id() else current.notified_by_xact end,
        notified_case_status = excluded.case_status,
        thread_message_id = coalesce(current.thread_message_id, $16::text)
      where case when excluded.case_status = 'Withdrawn' then current.opened
        else current.case_status <> 'Withdrawn'
          and (coalesce(excluded.s4_changed_at, '-infinity'), excluded.s4_read_at)
           >= (coalesce(current.s4_changed_at, '-infinity'), current.s4_read_at) end
      returning opened, case_status, sold_to_party, customer_reference, sales_order, return_reasons,
        s4_changed_at, previous_notified_case_status, thread_message_id,
        notified_by_xact = pg_current_xact_id() as notified
    ), kase as (
      select u.* from upserted u where u.opened
    ), changed as (
      select k.* from kase k where k.notified
    ), queued as (
      insert into mail_outbox (family, key, content, recipients, message_id, change, locale, in_reply_to,
        trace_parent)
      select 'customerReturn', $7::text, jsonb_build_object('caseStatus', c.case_status,
               'previousCaseStatus', c.previous_notified_case_status, 'salesOrder', c.sales_order,
               'returnReasons', to_jsonb(c.return_reasons), 'soldToParty', c.sold_to_party,
               'customerReference', c.customer_reference),
             coalesce(r.recipients, $17::text[]), $16::text,
             case when c.previous_notified_case_status is null then 'new' else 'changed' end,
             coalesce(r.locale, $18::text), nullif(c.thread_message_id, $16::text), $19::text
      from changed c left join mail_recipient r on r.sold_to_party = c.sold_to_party
      -- $20: false for a go-live load (a baseline), which keeps the ledger and sends nothing.
      where $20::boolean
      returning 1
    )${pushToPortal ? QUEUE_PUSH : ''}, ${recordProcessedSql({
      outcome: OUTCOME,
      read: {
        // What the timeline renders (timeline.ts).
        seen: `jsonb_build_object('caseStatus', $8::text, 'changedAt', ${jsonTimestamp('$13::timestamptz')})`,
        notification: notificationSql('kase', 'previous_notified_case_status'),
      },
    })}
    select ${OUTCOME} as "result", exists (select from queued) as "mailQueued",
      ${pushToPortal ? 'exists (select from pushed)' : 'false'} as "pushQueued"`;
}

/**
 * Retention's batch of tombstones older than DEDUP_RETENTION_DAYS (the cutoff, $1): a tombstone only makes a state
 * read before the deletion stale, and that read's statement runs within its delivery, long before then.
 */
export const EXPIRED_TOMBSTONES = deleteOldest('warranty_case', 'updated_at', 'not opened and ');

const STATEMENT = { name: 'warranty-case-effect', text: caseEffectSql(false) };
const STATEMENT_WITH_PUSH = { name: 'warranty-case-effect-push', text: caseEffectSql(true) };

/**
 * The effect of events of one return answered by one read, in one auto-committed statement; a record committed
 * meanwhile by another delivery fails it all, and the events are a duplicate.
 */
export async function writeCase(
  pool: Pool,
  events: ParsedEvent[],
  state: CaseState,
  mail: EffectMail,
  pushToPortal: boolean,
  /** The transaction's span as a `traceparent`, if traced: the mail send links back to it. */
  traceParent: string | null = null,
): Promise<EffectResult> {
  const answer = await unlessRecordedAlready(
    withClient(pool, (client) =>
      client.query<EffectResult>({
        ...(pushToPortal ? STATEMENT_WITH_PUSH : STATEMENT),
        values: [
          ...identityValues(events),
          state.customerReturn,
          state.caseStatus,
          state.soldToParty,
          state.customerReference,
          state.salesOrder,
          state.returnReasons,
          state.changedAt,
          state.readAt,
          state.isCase,
          // Fixed here, so a resend after a crash reuses it; the case's first one starts its conversation.
          `<${randomUUID()}@${mail.messageIdDomain}>`,
          mail.to,
          mail.locale,
          traceParent,
          events.every((event) => event.reconciled?.notify !== false),
          // The S/4HANA system the case belongs to, whichever path read the return (one source per record).
          systemOf(events[0] as ParsedEvent),
          // The Idempotency-Key of the push this state may queue, the same on every retry of it.
          ...(pushToPortal ? [randomUUID()] : []),
        ],
      }),
    ),
  );
  const row = answer?.rows[0];
  return row ?? { result: 'duplicate', mailQueued: false, pushQueued: false };
}

/**
 * The S/4HANA system an event speaks for: its source, or for a document reconciliation read, the system it read
 * (its records are kept under an identity of their own). A return opened by an event and read by a run is one case.
 */
function systemOf(event: ParsedEvent): string {
  return event.reconciled?.system ?? event.source;
}
