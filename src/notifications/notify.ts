import type { Executor } from '../db/transaction.js';
import type { PortalOrder } from '../portal/portalStatus.js';

/**
 * Decides, inside the effect's transaction, whether the order really changed for the fleet manager: its
 * (portal status, requested delivery date) differs from the last pair notified, or it is the first state seen.
 * On a real change it records the new pair and queues exactly one email; otherwise it writes nothing.
 * Called only when this state became the portal's current one, under that row's lock, so concurrent events of
 * one order decide one after the other. Returns the outbox id, or null when there is nothing to tell.
 */
export async function notifyOnChange(
  tx: Executor,
  order: PortalOrder,
  defaultRecipients: string[],
  messageIdDomain: string,
): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>({
    // Named: prepared once per connection, then only bound and executed.
    name: 'notify-on-change',
    text: `with changed as (
       insert into order_notification as last (sales_order, portal_status, requested_delivery_date)
       values ($1::text, $2::text, $3::date)
       on conflict (sales_order) do update set
         portal_status = excluded.portal_status,
         requested_delivery_date = excluded.requested_delivery_date,
         notified_at = now()
       where (last.portal_status, last.requested_delivery_date)
             is distinct from (excluded.portal_status, excluded.requested_delivery_date)
       returning sales_order
     )
     insert into mail_outbox
       (sales_order, portal_status, requested_delivery_date, sold_to_party, customer_reference, recipients, message_id)
     select $1::text, $2::text, $3::date, $4::text, $5::text,
            coalesce((select recipients from mail_recipient where sold_to_party = $4::text), $6::text[]),
            '<' || gen_random_uuid() || '@' || $7::text || '>'
     from changed
     returning id::text as "id"`,
    values: [
      order.salesOrder,
      order.portalStatus,
      order.requestedDeliveryDate,
      order.soldToParty,
      order.customerReference,
      defaultRecipients,
      messageIdDomain,
    ],
  });
  return rows[0]?.id ?? null;
}
