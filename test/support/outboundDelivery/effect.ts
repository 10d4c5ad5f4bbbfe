// The effect of new events of one delivery, in one statement: record them as processed, upsert the delivery unless
// the stored state is newer, move its notification ledger and queue one email on a real change of its status, and
// queue its state's push. The family's own table is DELIVERY_TABLE, which the test creates: no migration of the
// service's.
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { withClient } from '../../../src/db/checkout.js';
import { jsonTimestamp } from '../../../src/db/content.js';
import { deleteOldest } from '../../../src/db/deleteOldest.js';
import type { EffectMail, EffectResult } from '../../../src/events/effect.js';
import type { ParsedEvent } from '../../../src/events/parsedEvent.js';
import {
  identityValues,
  notificationSql,
  recordProcessedSql,
  unlessRecordedAlready,
} from '../../../src/events/processedRecord.js';
import type { DeliveryState } from './state.js';

export const DELIVERY_TABLE = `
  create table outbound_delivery (
    delivery_document text primary key,
    status text not null,
    sold_to_party text,
    s4_changed_at timestamptz,
    s4_read_at timestamptz not null,
    notified_status text,
    previous_notified_status text,
    thread_message_id text,
    notified_by_xact xid8,
    updated_at timestamptz not null default now()
  );
  create index outbound_delivery_updated on outbound_delivery (updated_at)`;

const MOVES = 'current.notified_status is distinct from excluded.status';

const QUEUE_PUSH = `, pushed as (
      insert into portal_push as p (family, key, content, push_id)
      select 'outboundDelivery', $7::text, jsonb_build_object('deliveryDocument', $7::text, 'status', u.status,
               's4ChangedAt', ${jsonTimestamp('u.s4_changed_at')}), $16::uuid
      from upserted u
      on conflict (family, key) do update set content = excluded.content, push_id = excluded.push_id,
        state = 'pending', result = null, done_at = null, attempts = 0, next_attempt_at = now(), last_error = null,
        pending_since = case when p.state = 'pending' then p.pending_since else now() end
      where p.content is distinct from excluded.content
      returning 1
    )`;

function effectSql(pushToPortal: boolean): string {
  return `with upserted as (
      insert into outbound_delivery as current (delivery_document, status, sold_to_party, s4_changed_at,
        s4_read_at, notified_status, thread_message_id, notified_by_xact)
      values ($7::text, $8::text, $9::text, $10::timestamptz, $11::timestamptz, $8::text, $12::text,
        pg_current_xact_id())
      on conflict (delivery_document) do update set
        status = excluded.status, sold_to_party = excluded.sold_to_party,
        s4_changed_at = excluded.s4_changed_at, s4_read_at = excluded.s4_read_at, updated_at = now(),
        previous_notified_status = case when ${MOVES} then current.notified_status
          else current.previous_notified_status end,
        notified_by_xact = case when ${MOVES} then pg_current_xact_id() else current.notified_by_xact end,
        notified_status = excluded.status,
        thread_message_id = coalesce(current.thread_message_id, excluded.thread_message_id)
      where (coalesce(excluded.s4_changed_at, '-infinity'), excluded.s4_read_at)
         >= (coalesce(current.s4_changed_at, '-infinity'), current.s4_read_at)
      returning status, previous_notified_status, thread_message_id, s4_changed_at,
        notified_by_xact = pg_current_xact_id() as notified
    ), changed as (
      select c.* from upserted c where c.notified
    ), queued as (
      insert into mail_outbox (family, key, content, recipients, message_id, change, locale, in_reply_to,
        trace_parent)
      select 'outboundDelivery', $7::text,
             jsonb_build_object('status', c.status, 'previousStatus', c.previous_notified_status),
             $13::text[], $12::text, case when c.previous_notified_status is null then 'new' else 'changed' end,
             $14::text, nullif(c.thread_message_id, $12::text), $15::text
      from changed c
      returning 1
    )${pushToPortal ? QUEUE_PUSH : ''}, ${recordProcessedSql({
      outcome: `case when exists (select from upserted) then 'applied' else 'stale' end`,
      read: {
        // What the timeline renders (timeline.ts).
        seen: `jsonb_build_object('status', $8::text, 'changedAt', ${jsonTimestamp('$10::timestamptz')})`,
        notification: notificationSql('upserted', 'previous_notified_status'),
      },
    })}
    select case when exists (select from upserted) then 'applied' else 'stale' end as "result",
      exists (select from queued) as "mailQueued",
      ${pushToPortal ? 'exists (select from pushed)' : 'false'} as "pushQueued"`;
}

const STATEMENT = { name: 'outbound-delivery-effect', text: effectSql(false) };
const STATEMENT_WITH_PUSH = { name: 'outbound-delivery-effect-push', text: effectSql(true) };

export async function writeDelivery(
  pool: Pool,
  events: ParsedEvent[],
  state: DeliveryState,
  mail: EffectMail,
  pushToPortal: boolean,
  traceParent: string | null,
): Promise<EffectResult> {
  const answer = await unlessRecordedAlready(
    withClient(pool, (client) =>
      client.query<EffectResult>({
        ...(pushToPortal ? STATEMENT_WITH_PUSH : STATEMENT),
        values: [
          ...identityValues(events),
          state.deliveryDocument,
          state.status,
          state.soldToParty,
          state.changedAt,
          state.readAt,
          `<${randomUUID()}@${mail.messageIdDomain}>`,
          mail.to,
          mail.locale,
          traceParent,
          ...(pushToPortal ? [randomUUID()] : []),
        ],
      }),
    ),
  );
  return answer?.rows[0] ?? { result: 'duplicate', mailQueued: false, pushQueued: false };
}

/** Retention's batch of shipped deliveries not changed within the events' window: no event can name them now. */
export const EXPIRED_SHIPPED = deleteOldest('outbound_delivery', 'updated_at', `status = 'Shipped' and `);
