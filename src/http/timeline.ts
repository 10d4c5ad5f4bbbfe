// The timeline of a family's key, as its TimelineFamily says (an order: GET /api/orders/{salesOrder}/timeline, a
// return: GET /api/returns/{customerReturn}/timeline): every arrival of its events with what became of it, what
// each S/4HANA read saw and whether that was a change to notify, and its emails and portal push. Read from the tables
// the service writes anyway (processed_event, event_attempt, duplicate_arrival, dead_letter, mail_outbox,
// portal_push), so it tells what retention has kept and nothing more. No recipient address is read.
import type { Executor } from '../db/transaction.js';
import { type EmailRow, type EmailStep, emailSteps, emailsSql } from './timelineEmails.js';

/** Most rows of each kind a timeline shows: the newest ones, in time order. */
export const TIMELINE_LIMIT = 200;

export type ArrivalOutcome =
  | 'applied'
  | 'stale'
  | 'duplicate'
  | 'not_found'
  | 'ignored'
  | 'not_warranty_case'
  | 'released'
  /** Counted but neither processed nor released with an error: in process now, or its process died. */
  | 'in_progress'
  | 'dead_lettered';

export interface Arrival<Read> {
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
  read: Read | null;
  notification: { realChange: boolean; decision: string; reason: string } | null;
  /** A dead letter's id, for its detail and replay. */
  deadLetterId: string | null;
  replayedAt: Date | null;
}

/** What processed_event keeps of a read, for either family. */
interface ReadColumns {
  readStatus: string | null;
  readDate: string | null;
  readChangedAt: Date | null;
  readCaseStatus: string | null;
}

type Reasons = Record<string, { realChange: boolean; reason: string }>;

/** What sets one family's timeline apart: the column naming its key in every table, its values, its reasons. */
export interface TimelineFamily<Read> {
  /** A fixed column name, never a value: it names the key in processed_event and the tables beside it. */
  column: 'sales_order' | 'customer_return';
  /** The family's values in mail_outbox and portal_push, aliased for the answer. */
  state: string;
  read: (row: ReadColumns) => Read | null;
  reasons: Reasons;
}

/** A read older than the state held, the same for every family. */
export const STALE = {
  realChange: false,
  reason: 'the read was older than the state already held: nothing changed',
};

// One union in arrival order: each branch takes the newest rows of its kind, the outer query sorts them.
const arrivalsSql = (key: string) => `
  select * from (
    (select source, id, type, channel, coalesce(received_at, processed_at) as "receivedAt", attempts,
            outcome, last_error as "reason", processed_at as "processedAt", read_portal_status as "readStatus",
            to_char(read_requested_delivery_date, 'YYYY-MM-DD') as "readDate", read_changed_at as "readChangedAt",
            read_case_status as "readCaseStatus", notification, null::text as "deadLetterId",
            null::timestamptz as "replayedAt"
     from processed_event where ${key} = $1::text order by processed_at desc limit $2::int)
    union all
    (select a.source, a.id, p.type, a.channel, a.arrived_at, null, 'duplicate', null, null, null, null, null,
            null, null, null, null
     from duplicate_arrival a join processed_event p using (source, id)
     where p.${key} = $1::text order by a.arrived_at desc limit $2::int)
    union all
    (select source, id, null, channel, first_seen_at, attempts,
            case when last_error is null then 'in_progress' else 'released' end, last_error, null, null, null, null,
            null, null, null, null
     from event_attempt where ${key} = $1::text order by first_seen_at desc limit $2::int)
    union all
    (select source, event_id, attributes->>'type', channel, received_at, null, 'dead_lettered', reason, null,
            null, null, null, null, null, id::text, replayed_at
     from dead_letter where ${key} = $1::text order by id desc limit $2::int)
  ) arrival order by "receivedAt", "processedAt" nulls last`;

type ArrivalRow = Omit<Arrival<never>, 'read' | 'notification'> &
  ReadColumns & { notification: string | null };

function toArrival<Read>(family: TimelineFamily<Read>, row: ArrivalRow): Arrival<Read> {
  const { readStatus, readDate, readChangedAt, readCaseStatus, notification, ...rest } = row;
  const decision = row.outcome === 'stale' ? 'stale' : notification;
  const why = decision === null ? undefined : family.reasons[decision];
  return {
    ...rest,
    read: family.read({ readStatus, readDate, readChangedAt, readCaseStatus }),
    notification: why === undefined || decision === null ? null : { decision, ...why },
  };
}

export interface PortalPush {
  state: 'pending' | 'done' | 'parked';
  /** queued (pending), pushed, conflict or withdrawn (done), parked. */
  step: string;
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

const portalPushSql = (family: TimelineFamily<unknown>) => `
  select state, case state when 'done' then result when 'parked' then 'parked' else 'queued' end as "step",
         ${family.state}, push_id::text as "pushId", attempts, pending_since as "pendingSince",
         done_at as "doneAt", retried_at as "retriedAt", retried_state as "retriedState",
         retried_error as "retriedError", last_error as "reason"
  from portal_push where ${family.column} = $1::text`;

export interface Timeline<Read> {
  arrivals: Array<Arrival<Read>>;
  emails: EmailStep[];
  /** The one push row of the order or case: the state last queued or pushed to the portal's API. */
  portalPush: PortalPush | null;
}

/** The timeline of the order or return `key` names, or null when no table knows it. */
export async function timeline<Read>(
  db: Executor,
  family: TimelineFamily<Read>,
  key: string,
): Promise<Timeline<Read> | null> {
  const values = [key, TIMELINE_LIMIT];
  const [arrivals, emails, push] = await Promise.all([
    db.query<ArrivalRow>(arrivalsSql(family.column), values),
    db.query<EmailRow>(emailsSql(family), values),
    db.query<PortalPush>(portalPushSql(family), [key]),
  ]);
  if (arrivals.rowCount === 0 && emails.rowCount === 0 && push.rowCount === 0) return null;
  return {
    arrivals: arrivals.rows.map((row) => toArrival(family, row)),
    emails: emails.rows
      .flatMap(emailSteps)
      .sort((a, b) => a.at.getTime() - b.at.getTime() || Number(a.mailId) - Number(b.mailId)),
    portalPush: push.rows[0] ?? null,
  };
}
