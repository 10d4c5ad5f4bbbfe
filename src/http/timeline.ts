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
  /** Found by reconciliation (channel `reconcile`): the run and its window, and the document's S/4HANA stamp. */
  run?: { id: string; mode: string; windowFrom: string | null; windowTo: string | null };
  stamp?: string;
}

type Reasons = Record<string, { realChange: boolean; reason: string }>;

/** What sets one family's timeline apart: its name in every table, its values, its reasons. */
export interface TimelineFamily<Read> {
  /** The `family` of its rows (ParsedEvent.family). */
  family: string;
  /** The family's values in the content of mail_outbox and portal_push, aliased for the answer. */
  state: string;
  /** What a read saw, from processed_event.read as the family's effect recorded it (never null here). */
  read: (seen: unknown) => Read;
  reasons: Reasons;
}

/** A read older than the state held, the same for every family. */
export const STALE = {
  realChange: false,
  reason: 'the read was older than the state already held: nothing changed',
};

// One union in arrival order: each branch takes the newest rows of its kind, the outer query sorts them and
// names the reconciliation run of a reconciled document, whose id ends in its S/4HANA stamp
// (`<family>:<key>:<stamp>`, src/events/reconcileRead.ts). $1 the key, $2 the limit, $3 the family.
const ARRIVALS_SQL = `
  select arrival.*, r.mode as "runMode", r.window_from as "windowFrom", r.window_to as "windowTo" from (
    (select source, id, type, channel, coalesce(received_at, processed_at) as "receivedAt", attempts,
            outcome, last_error as "reason", processed_at as "processedAt", read as "seen", notification,
            null::text as "deadLetterId", null::timestamptz as "replayedAt", reconcile_run::text as "runId"
     from processed_event where family = $3::text and key = $1::text order by processed_at desc limit $2::int)
    union all
    (select a.source, a.id, p.type, a.channel, a.arrived_at, null, 'duplicate', null, null, null, null, null, null,
            null
     from duplicate_arrival a join processed_event p using (source, id)
     where p.family = $3::text and p.key = $1::text order by a.arrived_at desc limit $2::int)
    union all
    (select source, id, null, channel, first_seen_at, attempts,
            case when last_error is null then 'in_progress' else 'released' end, last_error, null, null, null,
            null, null, null
     from event_attempt where family = $3::text and key = $1::text order by first_seen_at desc limit $2::int)
    union all
    (select source, event_id, attributes->>'type', channel, received_at, null, 'dead_lettered', reason, null,
            null, null, id::text, replayed_at, null
     from dead_letter where family = $3::text and key = $1::text order by id desc limit $2::int)
  ) arrival left join reconcile_run r on r.id = arrival."runId"::bigint
  order by "receivedAt", "processedAt" nulls last`;

type ArrivalRow = Omit<Arrival<never>, 'read' | 'notification' | 'run' | 'stamp'> & {
  seen: unknown;
  notification: string | null;
  runId: string | null;
  runMode: string | null;
  windowFrom: string | null;
  windowTo: string | null;
};

function toArrival<Read>(family: TimelineFamily<Read>, row: ArrivalRow): Arrival<Read> {
  const { seen, notification, runId, runMode, windowFrom, windowTo, ...rest } = row;
  const decision = row.outcome === 'stale' ? 'stale' : notification;
  const why = decision === null ? undefined : family.reasons[decision];
  // A run retention removed still names its id; its mode and window are gone with it.
  const found =
    runId === null
      ? {}
      : {
          run: { id: runId, mode: runMode ?? 'unknown', windowFrom, windowTo },
          // Neither the family nor the key holds a colon; the stamp does.
          stamp: (row.id ?? '').split(':').slice(2).join(':'),
        };
  return {
    ...rest,
    ...found,
    read: seen === null ? null : family.read(seen),
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
  from portal_push where family = $2::text and key = $1::text`;

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
  const values = [key, TIMELINE_LIMIT, family.family];
  const [arrivals, emails, push] = await Promise.all([
    db.query<ArrivalRow>(ARRIVALS_SQL, values),
    db.query<EmailRow>(emailsSql(family), values),
    db.query<PortalPush>(portalPushSql(family), [key, family.family]),
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
