// What a settled phase must look like, read from the service's database, the mail relay and the broker.
// Each check returns findings (one line per violation) instead of throwing, so one run reports everything.
import type pg from 'pg';
import type { ReceivedMail } from '../../sandbox/smtpServer.js';
import type { ExpectedCase, ExpectedCaseStatus } from './caseStatusTable.js';
import { conversationOf, type QueuedMail } from './emailEndings.js';
import type { expectedPortal } from './scenario.js';

export type ExpectedPortal = ReturnType<typeof expectedPortal>;

export async function unprocessedIdentities(pool: pg.Pool, identities: string[]): Promise<string[]> {
  const { rows } = await pool.query<{ identity: string }>(
    `select want.identity as "identity"
     from unnest($1::text[]) as want(identity)
     where not exists (
       select from processed_event p where p.source || ' ' || p.id = want.identity
     )`,
    [identities],
  );
  return rows.map((row) => row.identity);
}

export async function checkPortal(pool: pg.Pool, expected: Map<string, ExpectedPortal>): Promise<string[]> {
  const { rows } = await pool.query<ExpectedPortal & { salesOrder: string }>(
    `select sales_order as "salesOrder", portal_status as "portalStatus",
            to_char(requested_delivery_date, 'YYYY-MM-DD') as "date",
            customer_reference as "customerReference", sold_to_party as "soldToParty"
     from portal_order_status`,
  );
  const actual = new Map(rows.map(({ salesOrder, ...row }) => [salesOrder, row]));
  const findings: string[] = [];
  for (const [salesOrder, want] of expected) {
    const got = actual.get(salesOrder);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      findings.push(
        `portal row of ${salesOrder} is ${JSON.stringify(got)}, S/4HANA says ${JSON.stringify(want)}`,
      );
    }
  }
  return findings;
}

/**
 * One warranty case per return, equal to S/4HANA's latest state of it (withdrawn once it is deleted); a tombstone
 * (a Deleted event of a return no case was opened for) is no case.
 */
export async function checkCases(pool: pg.Pool, expected: Map<string, ExpectedCase>): Promise<string[]> {
  const { rows } = await pool.query<ExpectedCase & { customerReturn: string; rows: number }>(
    `select customer_return as "customerReturn", min(case_status) as "caseStatus",
            min(sold_to_party) as "soldToParty", min(customer_reference) as "customerReference",
            min(sales_order) as "salesOrder", min(return_reasons) as "returnReasons", count(*)::int as "rows"
     from warranty_case where opened group by customer_return`,
  );
  const actual = new Map(rows.map(({ customerReturn, ...row }) => [customerReturn, row]));
  const findings: string[] = [];
  for (const [customerReturn, want] of expected) {
    const got = actual.get(customerReturn);
    if (JSON.stringify(got) !== JSON.stringify({ ...want, rows: 1 })) {
      findings.push(
        `warranty case of ${customerReturn} is ${JSON.stringify(got)}, S/4HANA says ${JSON.stringify(want)}`,
      );
    }
  }
  return findings;
}

export async function outboxRows(pool: pg.Pool): Promise<QueuedMail[]> {
  const { rows } = await pool.query<QueuedMail>(
    `select message_id as "messageId", case family when 'salesOrder' then key end as "salesOrder",
            case family when 'customerReturn' then key end as "customerReturn", state, attempts,
            last_error as "lastError", created_at as "queuedAt"
     from mail_outbox`,
  );
  return rows;
}

/** Mail still to go out; parked mail is not waited for: endRun.ts reports each one as a finding. */
export async function pendingMail(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as "n" from mail_outbox where state = 'pending'`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * The phase's new mail against the expected changes, per order: `changed` lists the states of the phase that
 * were real changes, in the order S/4HANA took them on. Each email (a new Message-ID) shows one of them, the
 * emails arrive in that order (one about an earlier state after one about a later state is a finding), each
 * state at most once, and the last state is always emailed. An earlier state may go unmailed: an event read
 * S/4HANA only after the order had moved on. No email for any other order.
 */
export function checkMail(
  mails: ReceivedMail[],
  changed: Map<string, ExpectedPortal[]>,
  known: Set<string>,
): string[] {
  const pair = (state: { portalStatus: string | undefined; date: string | null }) =>
    `${state.portalStatus}/${state.date}`;
  const orderMails = mails.filter((mail) => mail.headers['x-customer-return'] === undefined);
  return judgeConversations('order', newMails(orderMails, known, 'x-sales-order'), changed, pair, (mail) =>
    pair({
      portalStatus: mail.headers['x-portal-status'],
      date: mail.headers['x-requested-delivery-date'] ?? null,
    }),
  );
}

/**
 * The phase's new case emails against the case statuses each return went through in the phase, judged as
 * checkMail judges an order's: in order, each status at most once, the last always, none for an unchanged case.
 */
export function checkCaseMail(
  mails: ReceivedMail[],
  changed: Map<string, ExpectedCaseStatus[]>,
  known: Set<string>,
): string[] {
  const caseMails = mails.filter((mail) => mail.headers['x-customer-return'] !== undefined);
  return judgeConversations(
    'return',
    newMails(caseMails, known, 'x-customer-return'),
    changed,
    (status) => status,
    (mail) => mail.headers['x-case-status'] ?? '?',
  );
}

/** Mails not judged before, by the conversation the header names; a resend is judged by checkEveryEmail. */
function newMails(mails: ReceivedMail[], known: Set<string>, header: string): Map<string, ReceivedMail[]> {
  const byKey = new Map<string, ReceivedMail[]>();
  for (const mail of mails) {
    if (known.has(mail.messageId)) continue;
    known.add(mail.messageId);
    const key = mail.headers[header] ?? '?';
    byKey.set(key, [...(byKey.get(key) ?? []), mail]);
  }
  return byKey;
}

function judgeConversations<T>(
  what: string,
  byKey: Map<string, ReceivedMail[]>,
  changed: Map<string, T[]>,
  describe: (state: T) => string,
  shows: (mail: ReceivedMail) => string,
): string[] {
  const findings: string[] = [];
  for (const [key, states] of changed) {
    const wanted = states.map(describe);
    const shown = (byKey.get(key) ?? []).map(shows);
    let last = -1;
    for (const [i, said] of shown.entries()) {
      const at = wanted.indexOf(said, last + 1);
      if (at === -1) {
        const earlier = wanted.lastIndexOf(said, last);
        findings.push(
          earlier === -1
            ? `${what} ${key}: email says ${said}, S/4HANA went through ${wanted.join(' → ')}`
            : `${what} ${key}: email for ${said} arrived after the one for ${shown[i - 1]}, ` +
                `which S/4HANA took on later (${wanted.join(' → ')})`,
        );
        continue;
      }
      last = at;
    }
    if (shown.at(-1) !== wanted.at(-1)) {
      findings.push(
        `${what} ${key} changed to ${wanted.join(' → ')}: emails say ${shown.join(', ') || 'nothing'}`,
      );
    }
  }
  for (const [key, got] of byKey) {
    if (!changed.has(key)) findings.push(`${what} ${key} did not change but got ${got.length} email(s)`);
  }
  return findings;
}

/** The longest time from queueing an email to the relay's first acceptance of it. */
export function longestDelay(
  accepted: Map<string, number[]>,
  outbox: QueuedMail[],
): { ms: number; messageId: string; salesOrder: string; claims: number } | undefined {
  let longest: ReturnType<typeof longestDelay>;
  for (const row of outbox) {
    const first = accepted.get(row.messageId)?.[0];
    if (first === undefined) continue;
    const ms = first - row.queuedAt.getTime();
    if (longest === undefined || ms > longest.ms)
      longest = { ms, messageId: row.messageId, salesOrder: conversationOf(row), claims: row.attempts };
  }
  return longest;
}

/**
 * A resend must be the email it repeats: what an email says is recorded with its outbox row when it is queued,
 * so a resend after a crash has the first send's subject, body and threading, whatever happened since.
 */
export function checkResentContent(mails: ReceivedMail[]): string[] {
  const first = new Map<string, ReceivedMail>();
  const findings: string[] = [];
  for (const mail of mails) {
    const earlier = first.get(mail.messageId);
    if (earlier === undefined) {
      first.set(mail.messageId, mail);
      continue;
    }
    const parts: Array<[string, (m: ReceivedMail) => string | undefined]> = [
      ['subject', (m) => m.subject],
      ['text', (m) => m.text],
      ['HTML', (m) => m.html],
      ['In-Reply-To', (m) => m.headers['in-reply-to']],
    ];
    const differs = parts.filter(([, part]) => part(mail) !== part(earlier)).map(([name]) => name);
    if (differs.length > 0) {
      findings.push(
        `email ${mail.messageId} was resent with another ${differs.join(', ')} than its first send`,
      );
    }
  }
  return findings;
}

/**
 * The dead-letter table holds the phase's malformed messages, each once, and nothing else; the dead-letter queue
 * holds each once too, unless the rejection was lost with its connection: the broker then sent the message again,
 * the service took it as already refused, and the broker forgot it. So a malformed message missing from the queue
 * needs an `already_refused` taking of the phase (`alreadyRefused`) to account for it.
 */
export async function checkDeadLetters(
  pool: pg.Pool,
  drained: Array<{ body: string }>,
  malformed: string[],
  afterId: number,
  alreadyRefused: number,
): Promise<{ findings: string[]; lastId: number; validDeadLettered: number }> {
  const findings: string[] = [];
  const markerOf = (body: string) => /malformed-p\d+-\d+-[0-9a-f]{8}/.exec(body)?.[0];
  const inQueue = drained.map((letter) => markerOf(letter.body));
  let validDeadLettered = 0;
  for (const letter of drained) {
    if (markerOf(letter.body) === undefined) {
      validDeadLettered++;
      findings.push(`a valid event went to the dead-letter queue: ${letter.body.slice(0, 160)}`);
    }
  }
  const missing: string[] = [];
  for (const marker of malformed) {
    const copies = inQueue.filter((found) => found === marker).length;
    if (copies === 0) missing.push(marker);
    else if (copies > 1)
      findings.push(`malformed message ${marker} is in the dead-letter queue ${copies} times`);
  }
  if (missing.length > alreadyRefused) {
    findings.push(
      `${missing.length} malformed messages are not in the dead-letter queue (${missing.join(', ')}), ` +
        `but only ${alreadyRefused} refused messages were taken again`,
    );
  }
  const { rows } = await pool.query<{ id: number; reason: string; body: Buffer }>(
    `select id::int as "id", reason, body from dead_letter where id > $1::bigint order by id`,
    [afterId],
  );
  for (const row of rows) {
    const marker = markerOf(row.body.toString('utf8'));
    if (marker === undefined || !malformed.includes(marker)) {
      findings.push(
        `dead_letter holds an unexpected message (${row.reason}): ${row.body.toString('utf8').slice(0, 160)}`,
      );
    }
  }
  for (const marker of malformed) {
    const stored = rows.filter((row) => row.body.toString('utf8').includes(marker)).length;
    if (stored === 0) findings.push(`malformed message ${marker} has no dead_letter row with its reason`);
    if (stored > 1) findings.push(`malformed message ${marker} has ${stored} dead_letter rows, not one`);
  }
  return { findings, lastId: rows.at(-1)?.id ?? afterId, validDeadLettered };
}
