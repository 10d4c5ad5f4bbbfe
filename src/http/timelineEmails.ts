// The emails of an order's or a return's timeline (timeline.ts): each email of mail_outbox as the steps it went
// through. Each step carries the family's values as well (TimelineFamily.state: an order's status and date, a
// case's status).

export interface EmailStep {
  mailId: string;
  at: Date;
  step: 'queued' | 'resent' | 'sent' | 'parked' | 'failing';
  change: string | null;
  messageId: string;
  attempts: number;
  reason: string | null;
}

// Each email as the steps it went through; a parked or failing one says why (its last error). $1 the key, $2 the
// limit, $3 the family.
export const emailsSql = (family: { state: string }) => `
  select id::text as "mailId", ${family.state}, change,
         message_id as "messageId", attempts, state, created_at as "createdAt", retried_at as "retriedAt",
         retried_state as "retriedState", retried_error as "retriedError", sent_at as "sentAt",
         next_attempt_at as "nextAttemptAt", last_error as "lastError"
  from mail_outbox where family = $3::text and key = $1::text order by id desc limit $2::int`;

export interface EmailRow {
  mailId: string;
  change: string | null;
  messageId: string;
  attempts: number;
  state: 'pending' | 'sent' | 'parked';
  createdAt: Date;
  retriedAt: Date | null;
  retriedState: 'pending' | 'parked' | null;
  retriedError: string | null;
  sentAt: Date | null;
  nextAttemptAt: Date;
  lastError: string | null;
}

export function emailSteps(row: EmailRow): EmailStep[] {
  const {
    state,
    createdAt,
    retriedAt,
    retriedState,
    retriedError,
    sentAt,
    nextAttemptAt,
    lastError,
    ...mail
  } = row;
  const step = (at: Date, name: EmailStep['step'], reason: string | null = null): EmailStep => ({
    ...mail,
    at,
    step: name,
    reason,
  });
  const steps = [step(createdAt, 'queued')];
  if (retriedAt !== null) {
    // When it was parked is not kept: it was before the retry.
    steps.push(step(retriedAt, retriedState === 'parked' ? 'parked' : 'failing', retriedError));
    steps.push(step(retriedAt, 'resent'));
  }
  if (state === 'sent' && sentAt !== null) steps.push(step(sentAt, 'sent'));
  if (state === 'parked') steps.push(step(nextAttemptAt, 'parked', lastError));
  if (state === 'pending' && lastError !== null) steps.push(step(nextAttemptAt, 'failing', lastError));
  return steps;
}
