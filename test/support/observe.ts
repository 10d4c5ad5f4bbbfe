// What the test world holds about an order, read the way the portal, the admin and the fleet manager would see it:
// the portal row, the processed events, the outbox and the mails the SMTP relay received. One reader for every
// test file, so a column or a header is named once.
import type { ReceivedMail, SmtpSink } from '../../sandbox/smtpServer.js';
import type { TestDatabase } from './database.js';

export interface PortalRow {
  portalStatus: string;
  /** requested_delivery_date as YYYY-MM-DD */
  date: string | null;
  soldToParty: string | null;
  customerReference: string | null;
  /** s4_changed_at: S/4HANA's LastChangeDateTime of the state shown */
  changedAt: Date | null;
  /** s4_read_at: when the state shown was read */
  readAt: Date;
}

export interface ProcessedRow {
  source: string;
  id: string;
  type: string;
  salesOrder: string | null;
  outcome: string;
  payloadHash: string;
}

export interface OutboxRow {
  portalStatus: string;
  date: string | null;
  recipients: string[];
  messageId: string;
  state: string;
  attempts: number;
}

export interface ProcessedFilter {
  salesOrder?: string;
  outcome?: string;
  id?: string;
}

/** Reads `world` when asked, so a file can name its view before the world has started. */
export function observe(world: { db: TestDatabase; smtp: SmtpSink }) {
  const pool = () => world.db.pool;
  return {
    async portalRow(salesOrder: string): Promise<PortalRow | undefined> {
      const { rows } = await pool().query<PortalRow>(
        `select portal_status as "portalStatus", to_char(requested_delivery_date, 'YYYY-MM-DD') as "date",
                sold_to_party as "soldToParty", customer_reference as "customerReference",
                s4_changed_at as "changedAt", s4_read_at as "readAt"
         from portal_order_status where sales_order = $1::text`,
        [salesOrder],
      );
      return rows[0];
    },

    /** Processed events matching every given field, in the order they were committed. */
    async processed(filter: ProcessedFilter = {}): Promise<ProcessedRow[]> {
      const { rows } = await pool().query<ProcessedRow>(
        `select source, id, type, case family when 'salesOrder' then key end as "salesOrder", outcome,
                payload_hash as "payloadHash"
         from processed_event
         where ($1::text is null or (family = 'salesOrder' and key = $1)) and ($2::text is null or outcome = $2)
           and ($3::text is null or id = $3)
         order by processed_at, id`,
        [filter.salesOrder ?? null, filter.outcome ?? null, filter.id ?? null],
      );
      return rows;
    },

    async processedCount(filter: ProcessedFilter = {}): Promise<number> {
      return (await this.processed(filter)).length;
    },

    /** The order's outbox rows in the order they were queued. */
    async outbox(salesOrder: string): Promise<OutboxRow[]> {
      const { rows } = await pool().query<OutboxRow>(
        `select content->>'portalStatus' as "portalStatus", content->>'requestedDeliveryDate' as "date",
                recipients, message_id as "messageId", state, attempts
         from mail_outbox where family = 'salesOrder' and key = $1::text order by id`,
        [salesOrder],
      );
      return rows;
    },

    /** Outbox rows of the orders not yet sent (pending or parked). */
    async unsentMail(salesOrders: string[]): Promise<number> {
      const { rows } = await pool().query<{ n: number }>(
        `select count(*)::int as "n" from mail_outbox
         where family = 'salesOrder' and key = any($1::text[]) and state <> 'sent'`,
        [salesOrders],
      );
      return rows[0]?.n ?? 0;
    },

    /** Portal pushes of the orders still to go: due, waiting to retry, or leased to a sender awaiting the portal. */
    async pendingPushes(salesOrders: string[]): Promise<number> {
      const { rows } = await pool().query<{ n: number }>(
        `select count(*)::int as "n" from portal_push
         where family = 'salesOrder' and key = any($1::text[]) and state = 'pending'`,
        [salesOrders],
      );
      return rows[0]?.n ?? 0;
    },

    async processedOf(salesOrders: string[]): Promise<number> {
      const { rows } = await pool().query<{ n: number }>(
        `select count(*)::int as "n" from processed_event where family = 'salesOrder' and key = any($1::text[])`,
        [salesOrders],
      );
      return rows[0]?.n ?? 0;
    },

    /** What the SMTP relay received about the order, in arrival order. */
    mails(salesOrder: string): ReceivedMail[] {
      return world.smtp.messages.filter((mail) => mail.headers['x-sales-order'] === salesOrder);
    },
  };
}

export type Observer = ReturnType<typeof observe>;
