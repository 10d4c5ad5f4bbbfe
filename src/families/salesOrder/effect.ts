// The effect of new sales-order events of one order, in one transaction. Its SQL spans the tables of the portal,
// the notification state, the outbox and the events' records on purpose: one statement is a transaction of its
// own, one round trip where begin, a statement per table and commit cost six, and on two cores the round trips
// were the bottleneck.
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { withClient } from '../../db/checkout.js';
import { jsonTimestamp } from '../../db/content.js';
import type { EffectMail, EffectResult } from '../../events/effect.js';
import type { ParsedEvent } from '../../events/parsedEvent.js';
import {
  identityValues,
  notificationSql,
  recordProcessedSql,
  unlessRecordedAlready,
} from '../../events/processedRecord.js';
import { queuePushSql } from './effectPush.js';
import { type PortalOrder, SET_STATE_FROM_EXCLUDED, STATE_COLUMNS } from './state.js';

interface EffectRow {
  applied: boolean;
  mailQueued: boolean;
  pushQueued: boolean;
}

// With PORTAL_DESTINATION set, the statement also queues the portal push (pushOutbox.ts). A prepared statement
// per variant, since their texts differ.
const PUSH_ID = '$19::uuid';

/** The effect's statement, without and with the portal push: its text built once, prepared per connection. */
function effectSql(pushToPortal: boolean): string {
  return `with portal as (
      insert into portal_order_status as current (sales_order, ${STATE_COLUMNS}, s4_read_at)
      values ($7::text, $8::text, $9::date, $10::text, $11::text, $12::timestamptz, $13::timestamptz)
      on conflict (sales_order) do update set ${SET_STATE_FROM_EXCLUDED},
        s4_read_at = excluded.s4_read_at,
        updated_at = now()
      where (coalesce(excluded.s4_changed_at, '-infinity'), excluded.s4_read_at)
         >= (coalesce(current.s4_changed_at, '-infinity'), current.s4_read_at)
      returning sales_order, ${STATE_COLUMNS}
    ), changed as (
      -- An update's SET reads the row it replaces: the pair notified so far becomes the previous pair, taken
      -- from the row version this statement locked, never from an older snapshot.
      insert into order_notification as last
        (sales_order, portal_status, requested_delivery_date, thread_message_id)
      select $7::text, $8::text, $9::date, $16::text from portal
      on conflict (sales_order) do update set
        previous_portal_status = last.portal_status,
        previous_requested_delivery_date = last.requested_delivery_date,
        portal_status = excluded.portal_status,
        requested_delivery_date = excluded.requested_delivery_date,
        thread_message_id = coalesce(last.thread_message_id, excluded.thread_message_id),
        notified_at = now()
      where (last.portal_status, last.requested_delivery_date)
            is distinct from (excluded.portal_status, excluded.requested_delivery_date)
      returning previous_portal_status, previous_requested_delivery_date, thread_message_id
    ), queued as (
      insert into mail_outbox (family, key, content, recipients, message_id, change, locale, in_reply_to,
        trace_parent)
      select 'salesOrder', $7::text, jsonb_build_object('portalStatus', $8::text,
               'requestedDeliveryDate', to_char($9::date, 'YYYY-MM-DD'), 'soldToParty', $10::text,
               'customerReference', $11::text, 'previousPortalStatus', c.previous_portal_status,
               'previousRequestedDeliveryDate', to_char(c.previous_requested_delivery_date, 'YYYY-MM-DD')),
             coalesce(r.recipients, $14::text[]), $16::text,
             case when c.previous_portal_status is null then 'new' else 'changed' end,
             coalesce(r.locale, $15::text), nullif(c.thread_message_id, $16::text), $17::text
      from changed c left join mail_recipient r on r.sold_to_party = $10::text
      -- $18: false for a go-live load (a baseline), which keeps the ledger and sends nothing.
      where $18::boolean
      returning 1
    )${pushToPortal ? `, ${queuePushSql(PUSH_ID)}` : ''}, ${recordProcessedSql({
      outcome: `case when exists (select from portal) then 'applied' else 'stale' end`,
      read: {
        // What the timeline renders (timeline.ts).
        seen: `jsonb_build_object('portalStatus', $8::text, 'requestedDeliveryDate', to_char($9::date, 'YYYY-MM-DD'),
          'changedAt', ${jsonTimestamp('$12::timestamptz')})`,
        // A new order's first notification has no previous pair (changed's insert returns null there).
        notification: notificationSql('portal', 'previous_portal_status'),
      },
    })}
    select exists (select from portal) as "applied",
           exists (select from queued) as "mailQueued",
           ${pushToPortal ? 'exists (select from pushed where queued)' : 'false'} as "pushQueued"`;
}

const EFFECT = { name: 'apply-effect', text: effectSql(false) };
const EFFECT_WITH_PUSH = { name: 'apply-effect-push', text: effectSql(true) };

/**
 * The effect of events of one order answered by one read, in one auto-committed statement: upsert the portal row
 * unless the stored state is newer, queue one email if the notified pair changed, record the events as processed;
 * a record committed meanwhile by another delivery fails it all (docs/processing.md, The flow).
 */
export async function applyEffect(
  pool: Pool,
  events: ParsedEvent[],
  order: PortalOrder,
  mail: EffectMail,
  pushToPortal = false,
  /** The transaction's span as a `traceparent`, if traced: the mail send links back to it. */
  traceParent: string | null = null,
): Promise<EffectResult> {
  // On a client of its own, so that a connection lost mid-statement is named as such (checkout.ts).
  const answer = await unlessRecordedAlready(
    withClient(pool, (client) =>
      client.query<EffectRow>({
        ...(pushToPortal ? EFFECT_WITH_PUSH : EFFECT),
        values: [
          ...identityValues(events),
          order.salesOrder,
          order.portalStatus,
          order.requestedDeliveryDate,
          order.soldToParty,
          order.customerReference,
          order.changedAt,
          order.readAt,
          mail.to,
          mail.locale,
          // Fixed here, so a resend after a crash reuses it; the order's first one starts its conversation.
          `<${randomUUID()}@${mail.messageIdDomain}>`,
          traceParent,
          events.every((event) => event.reconciled?.notify !== false),
          // The Idempotency-Key of the push this state may queue, the same on every retry of it.
          ...(pushToPortal ? [randomUUID()] : []),
        ],
      }),
    ),
  );
  if (answer === undefined) return { result: 'duplicate', mailQueued: false, pushQueued: false };
  const row = answer.rows[0];
  if (row?.applied !== true) return { result: 'stale', mailQueued: false, pushQueued: false };
  return { result: 'applied', mailQueued: row.mailQueued, pushQueued: row.pushQueued };
}
