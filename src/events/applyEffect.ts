// The effect of a new sales-order event, in one transaction. Its SQL spans the tables of the portal, the
// notification state and the outbox on purpose: as one statement it costs three round trips (begin, statement,
// commit) where a statement per table cost five, and on two cores the round trips were the bottleneck.
import type { Pool } from 'pg';
import { type Executor, withTransaction } from '../db/transaction.js';
import type { PortalOrder } from '../portal/portalStatus.js';
import type { ParsedEvent } from './cloudEvent.js';

export interface EffectResult {
  result: 'applied' | 'stale' | 'duplicate';
  /** An email was queued in the outbox: wake the sender. */
  mailQueued: boolean;
}

/**
 * The effect of a new event with its order's current state, in one transaction: record the event as processed
 * (a conflict on source + id means another delivery won: nothing else is written), upsert the portal row unless
 * the stored state is newer (the row lock taken there orders concurrent events of one order), and if this state
 * became the portal's and its (status, requested delivery date) differs from the pair last notified, record the
 * pair and queue one email. One statement does all of it, in that order: each step takes its rows from the one
 * before (`where exists (select from recorded)`, `from portal`, `from changed`), so PostgreSQL runs them in
 * sequence, each under the locks of the previous. A second statement marks the record stale when the portal kept
 * a newer state; the label cannot be known before the upsert that must come after the record.
 * Three round trips (begin, the statement, commit) where one statement per step took five: on two cores
 * the round trips, not the SQL, were what the database and the service spent their time on.
 */
export async function applyEffect(
  pool: Pool,
  event: ParsedEvent,
  order: PortalOrder,
  mail: { to: string[]; messageIdDomain: string },
): Promise<EffectResult> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ recorded: boolean; applied: boolean; mailQueued: boolean }>({
      name: 'apply-effect',
      text: `with recorded as (
         insert into processed_event (source, id, type, sales_order, outcome, payload_hash)
         values ($1::text, $2::text, $3::text, $4::text, 'applied', $5::text)
         on conflict (source, id) do nothing
         returning 1
       ), cleared as (
         delete from event_attempt where source = $1::text and id = $2::text and exists (select from recorded)
       ), portal as (
         insert into portal_order_status as current
           (sales_order, portal_status, requested_delivery_date, sold_to_party, customer_reference,
            s4_changed_at, s4_read_at)
         select $4::text, $6::text, $7::date, $8::text, $9::text, $10::timestamptz, $11::timestamptz
         where exists (select from recorded)
         on conflict (sales_order) do update set
           portal_status = excluded.portal_status,
           requested_delivery_date = excluded.requested_delivery_date,
           sold_to_party = excluded.sold_to_party,
           customer_reference = excluded.customer_reference,
           s4_changed_at = excluded.s4_changed_at,
           s4_read_at = excluded.s4_read_at,
           updated_at = now()
         where (coalesce(excluded.s4_changed_at, '-infinity'), excluded.s4_read_at)
            >= (coalesce(current.s4_changed_at, '-infinity'), current.s4_read_at)
         returning 1
       ), changed as (
         insert into order_notification as last (sales_order, portal_status, requested_delivery_date)
         select $4::text, $6::text, $7::date from portal
         on conflict (sales_order) do update set
           portal_status = excluded.portal_status,
           requested_delivery_date = excluded.requested_delivery_date,
           notified_at = now()
         where (last.portal_status, last.requested_delivery_date)
               is distinct from (excluded.portal_status, excluded.requested_delivery_date)
         returning 1
       ), queued as (
         insert into mail_outbox
           (sales_order, portal_status, requested_delivery_date, sold_to_party, customer_reference, recipients,
            message_id)
         select $4::text, $6::text, $7::date, $8::text, $9::text,
                coalesce((select recipients from mail_recipient where sold_to_party = $8::text), $12::text[]),
                '<' || gen_random_uuid() || '@' || $13::text || '>'
         from changed
         returning 1
       )
       select exists (select from recorded) as "recorded", exists (select from portal) as "applied",
              exists (select from queued) as "mailQueued"`,
      values: [
        event.source,
        event.id,
        event.type,
        order.salesOrder,
        event.payloadHash,
        order.portalStatus,
        order.requestedDeliveryDate,
        order.soldToParty,
        order.customerReference,
        order.changedAt,
        order.readAt,
        mail.to,
        mail.messageIdDomain,
      ],
    });
    const row = rows[0];
    if (row?.recorded !== true) return { result: 'duplicate', mailQueued: false };
    if (!row.applied) {
      await markStale(tx, event);
      return { result: 'stale', mailQueued: false };
    }
    return { result: 'applied', mailQueued: row.mailQueued };
  });
}

export async function markStale(tx: Executor, event: ParsedEvent): Promise<void> {
  await tx.query({
    name: 'mark-stale',
    text: `update processed_event set outcome = 'stale' where source = $1::text and id = $2::text`,
    values: [event.source, event.id],
  });
}
