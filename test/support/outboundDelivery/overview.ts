// What the admin API knows of a delivery (GET /api/outbound-deliveries/{deliveryDocument}).
import type { Executor } from '../../../src/db/transaction.js';

export async function deliveryOverview(db: Executor, delivery: string) {
  const [row, events] = await Promise.all([
    db.query(
      `select status, notified_status as "notifiedStatus", s4_changed_at as "s4ChangedAt"
       from outbound_delivery where delivery_document = $1::text`,
      [delivery],
    ),
    db.query(
      `select source, id, type, outcome, notification from processed_event
       where family = 'outboundDelivery' and key = $1::text order by processed_at desc limit 100`,
      [delivery],
    ),
  ]);
  if (row.rowCount === 0 && events.rowCount === 0) return null;
  return { deliveryDocument: delivery, delivery: row.rows[0] ?? null, events: events.rows };
}
