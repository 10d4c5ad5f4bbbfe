// An order's timeline for GET /api/orders/{salesOrder}/timeline: every arrival of its events with what became of
// it, what each S/4HANA read saw and whether that was a change to notify, and its emails and portal push. Read
// from the tables the service writes anyway (processed_event, event_attempt, duplicate_arrival, dead_letter,
// mail_outbox, portal_push), so it tells what retention has kept and nothing more. No recipient address is read.
import type { Executor } from '../db/transaction.js';
import { EMAILS, type EmailRow, type EmailStep, emailSteps } from './timelineEmails.js';

/** Most rows of each kind a timeline shows: the newest ones, in time order. */
export const TIMELINE_LIMIT = 200;

export type ArrivalOutcome =
  | 'applied'
  | 'stale'
  | 'duplicate'
  | 'not_found'
  | 'ignored'
  | 'released'
  /** Counted but neither processed nor released with an error: in process now, or its process died. */
  | 'in_progress'
  | 'dead_lettered';

export interface Arrival {
  source: string | null;
  id: string | null;
  type: string | null;
  channel: string | null;
  receivedAt: Date;
  /** Deliveries it took (processed), or has taken so far (released); null where not counted. */
  attempts: number | null;
  outcome: ArrivalOutcome;
  /** Why: a dead letter's reason, the last transient error of a released or retried delivery. */
  reason: string | null;
  processedAt: Date | null;
  /** What the S/4HANA read saw, for an event with an effect. */
  read: {
    portalStatus: string;
    requestedDeliveryDate: string | null;
    lastChangeDateTime: Date | null;
  } | null;
  notification: { realChange: boolean; decision: string; reason: string } | null;
  /** A dead letter's id, for its detail and replay. */
  deadLetterId: string | null;
  replayedAt: Date | null;
}

const NOTIFICATION_REASONS: Record<string, { realChange: boolean; reason: string }> = {
  new: { realChange: true, reason: 'the first state of this order: the fleet manager is told of it' },
  changed: {
    realChange: true,
    reason: 'status or requested delivery date differ from the pair last notified',
  },
  unchanged: {
    realChange: false,
    reason: 'status and requested delivery date are the pair already notified',
  },
  stale: { realChange: false, reason: 'the read was older than the state already held: nothing changed' },
};

// One union in arrival order: each branch takes the newest rows of its kind, the outer query sorts them.
const ARRIVALS = `
  select * from (
    (select source, id, type, channel, coalesce(received_at, processed_at) as "receivedAt", attempts,
            outcome, last_error as "reason", processed_at as "processedAt", read_portal_status as "readStatus",
            to_char(read_requested_delivery_date, 'YYYY-MM-DD') as "readDate", read_changed_at as "readChangedAt",
            notification, null::text as "deadLetterId", null::timestamptz as "replayedAt"
     from processed_event where sales_order = $1::text order by processed_at desc limit $2::int)
    union all
    (select a.source, a.id, p.type, a.channel, a.arrived_at, null, 'duplicate', null, null, null, null, null,
            null, null, null
     from duplicate_arrival a join processed_event p using (source, id)
     where p.sales_order = $1::text order by a.arrived_at desc limit $2::int)
    union all
    (select source, id, null, channel, first_seen_at, attempts,
            case when last_error is null then 'in_progress' else 'released' end, last_error, null, null, null, null,
            null, null, null
     from event_attempt where sales_order = $1::text order by first_seen_at desc limit $2::int)
    union all
    (select source, event_id, attributes->>'type', channel, received_at, null, 'dead_lettered', reason, null,
            null, null, null, null, id::text, replayed_at
     from dead_letter where sales_order = $1::text order by id desc limit $2::int)
  ) arrival order by "receivedAt", "processedAt" nulls last`;

type ArrivalRow = Omit<Arrival, 'read' | 'notification'> & {
  readStatus: string | null;
  readDate: string | null;
  readChangedAt: Date | null;
  notification: string | null;
};

function toArrival(row: ArrivalRow): Arrival {
  const { readStatus, readDate, readChangedAt, notification, ...rest } = row;
  const decision = row.outcome === 'stale' ? 'stale' : notification;
  const why = decision === null ? undefined : NOTIFICATION_REASONS[decision];
  return {
    ...rest,
    read:
      readStatus === null
        ? null
        : { portalStatus: readStatus, requestedDeliveryDate: readDate, lastChangeDateTime: readChangedAt },
    notification: why === undefined || decision === null ? null : { decision, ...why },
  };
}

export interface PortalPush {
  state: 'pending' | 'done' | 'parked';
  /** queued (pending), pushed, conflict or withdrawn (done), parked. */
  step: string;
  portalStatus: string;
  requestedDeliveryDate: string | null;
  pushId: string;
  attempts: number;
  pendingSince: Date;
  doneAt: Date | null;
  retriedAt: Date | null;
  /** The state and error it had when an operator retried it. */
  retriedState: string | null;
  retriedError: string | null;
  reason: string | null;
}

const PORTAL_PUSH = `
  select state, case state when 'done' then result when 'parked' then 'parked' else 'queued' end as "step",
         portal_status as "portalStatus", to_char(requested_delivery_date, 'YYYY-MM-DD') as "requestedDeliveryDate",
         push_id::text as "pushId", attempts, pending_since as "pendingSince", done_at as "doneAt",
         retried_at as "retriedAt", retried_state as "retriedState", retried_error as "retriedError",
         last_error as "reason"
  from portal_push where sales_order = $1::text`;

export interface OrderTimeline {
  salesOrder: string;
  arrivals: Arrival[];
  emails: EmailStep[];
  /** The order's one push row: the state last queued or pushed to the portal's API. */
  portalPush: PortalPush | null;
}

/** The order's timeline, or null when no table knows the order. */
export async function orderTimeline(db: Executor, salesOrder: string): Promise<OrderTimeline | null> {
  const values = [salesOrder, TIMELINE_LIMIT];
  const [arrivals, emails, push] = await Promise.all([
    db.query<ArrivalRow>(ARRIVALS, values),
    db.query<EmailRow>(EMAILS, values),
    db.query<PortalPush>(PORTAL_PUSH, [salesOrder]),
  ]);
  if (arrivals.rowCount === 0 && emails.rowCount === 0 && push.rowCount === 0) return null;
  return {
    salesOrder,
    arrivals: arrivals.rows.map(toArrival),
    emails: emails.rows
      .flatMap(emailSteps)
      .sort((a, b) => a.at.getTime() - b.at.getTime() || Number(a.mailId) - Number(b.mailId)),
    portalPush: push.rows[0] ?? null,
  };
}
