// What the fleet portal's API must hold once a phase settled, and which repeated PUTs a crash run may show.
// Like the mail checks, each returns findings instead of throwing.
import type pg from 'pg';
import type { PortalRequest, PortalServer } from '../../sandbox/portalServer.js';
import type { ExpectedCase } from './caseStatusTable.js';
import type { ExpectedPortal } from './checks.js';
import { type Claim, claimBefore, holderPid, judgeRepeats, type Kill, type Outage } from './holderCrash.js';

export async function pendingPushes(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as "n" from portal_push where state = 'pending'`,
  );
  return rows[0]?.n ?? 0;
}

/** The portal stand-in holds S/4HANA's latest state of every warranty case, as warranty_case does. */
export function checkCaseApi(portal: PortalServer, expected: Map<string, ExpectedCase>): string[] {
  const findings: string[] = [];
  for (const [customerReturn, want] of expected) {
    const held = portal.caseState(customerReturn);
    const got = held && {
      caseStatus: held.caseStatus,
      soldToParty: held.soldToParty,
      customerReference: held.customerReference,
      salesOrder: held.salesOrder,
      returnReasons: held.returnReasons,
    };
    if (JSON.stringify(got) !== JSON.stringify(want))
      findings.push(
        `the portal API holds case ${JSON.stringify(got)} for ${customerReturn}, S/4HANA says ${JSON.stringify(want)}`,
      );
  }
  return findings;
}

/** The portal stand-in holds S/4HANA's state of every order, as the portal table does. */
export function checkPortalApi(portal: PortalServer, expected: Map<string, ExpectedPortal>): string[] {
  const findings: string[] = [];
  for (const [salesOrder, want] of expected) {
    const held = portal.state(salesOrder);
    const got = held && {
      portalStatus: held.portalStatus,
      date: held.requestedDeliveryDate,
      customerReference: held.customerReference,
      soldToParty: held.soldToParty,
    };
    if (JSON.stringify(got) !== JSON.stringify(want))
      findings.push(
        `the portal API holds ${JSON.stringify(got)} for ${salesOrder}, S/4HANA says ${JSON.stringify(want)}`,
      );
  }
  return findings;
}

export interface RepeatedPut {
  idempotencyKey: string;
  /** `order <salesOrder>` or `return <customerReturn>`. */
  about: string;
  /** PUTs with this key after one the portal had answered 2xx or 409. */
  afterAnswer: number;
  cause: string;
}

/** A try the sender logged as failed ("portal push failed, will retry"): the client's own view of it. */
export interface FailedPush {
  /** The instance that logged it. */
  pid: number;
  pushId: string;
  /** The push's attempts when claimed for this try (Claim.attempt). */
  attempts: number;
  reason: string;
}

/** What may explain a key PUT again after the portal answered it. */
export interface PushEvidence {
  /** Each Idempotency-Key's claims (claimLog.ts). */
  claims: Map<string, Claim[]>;
  kills: Kill[];
  restarts: Outage[];
  failedPushes: FailedPush[];
}

// The reason the sender logs when its own timeout ended a try (src/s4/httpGet.ts, PORTAL_TIMEOUT_MS).
const CLIENT_TIMEOUT = /^Error: timeout of \d+ms exceeded$/;

/** A PUT of either resource: an order's or a warranty case's, keyed by the path's key. */
type AnyPut = PortalRequest<{ s4ChangedAt: string | null }>;

/**
 * Every PUT of the run, order by order (or case by case, `what` naming which). A PUT with a new Idempotency-Key
 * is a new state: never one whose s4ChangedAt is older than a state the portal accepted before, never the same
 * shown values as the push before it. A PUT repeating a key is a retry: after a failed try (503, a hang) that is
 * the backoff. After the portal answered (2xx, 409) it is a retry too when the client's timeout ended that try
 * before the answer reached it, as the holder's log says; otherwise the answer was never booked, which only a
 * crash of the instance holding the push's lease explains, one crash per repeat (holderCrash.ts).
 */
export function checkPortalPuts(
  requests: AnyPut[],
  evidence: PushEvidence,
  what: 'order' | 'return' = 'order',
): { repeats: RepeatedPut[]; findings: string[] } {
  const findings: string[] = [];
  const repeats: RepeatedPut[] = [];
  const byKey = new Map<string, AnyPut[]>();
  for (const request of requests)
    byKey.set(request.salesOrder, [...(byKey.get(request.salesOrder) ?? []), request]);
  for (const [key, puts] of byKey) {
    const about = `${what} ${key}`;
    let newestAccepted = '';
    const lastOfKey = new Map<string, AnyPut>();
    let previousNew: AnyPut | undefined;
    for (const put of puts) {
      const idempotencyKey = put.idempotencyKey ?? '';
      const changedAt = put.body?.s4ChangedAt ?? '';
      if (changedAt < newestAccepted)
        findings.push(`${about}: PUT of ${changedAt} after ${newestAccepted} was accepted`);
      if (put.status >= 200 && put.status < 300 && changedAt > newestAccepted) newestAccepted = changedAt;
      const earlier = lastOfKey.get(idempotencyKey);
      lastOfKey.set(idempotencyKey, put);
      if (earlier === undefined) {
        if (previousNew !== undefined && shown(previousNew) === shown(put))
          findings.push(`${about}: two pushes in a row of the same state ${shown(put)}`);
        previousNew = put;
        continue;
      }
      if (JSON.stringify(earlier.body) !== JSON.stringify(put.body))
        findings.push(`${about}: key ${idempotencyKey} was sent with two bodies`);
      const answered = (earlier.status >= 200 && earlier.status < 300) || earlier.status === 409;
      if (!answered) continue;
      const times: [number, number] = [earlier.at, put.at];
      const keyClaims = evidence.claims.get(idempotencyKey) ?? [];
      const judged = timedOutBeforeAnswer(idempotencyKey, times, keyClaims, evidence.failedPushes)
        ? { causes: ['its try timed out before the answer came'], findings: [] }
        : judgeRepeats(
            `${about}: key ${idempotencyKey} PUT again after its answer`,
            times,
            keyClaims,
            evidence.kills,
            evidence.restarts,
          );
      findings.push(...judged.findings);
      const cause = judged.causes.join(', ') || 'no crash of its holder';
      const repeat = repeats.find((r) => r.idempotencyKey === idempotencyKey);
      if (repeat === undefined) repeats.push({ idempotencyKey, about, afterAnswer: 1, cause });
      else repeat.afterAnswer++;
    }
  }
  return { repeats, findings };
}

/**
 * The PUT at `first` went out under one claim, the one at `next` under a later one, and the holder of the first
 * logged that try as ended by its own timeout: the portal's answer came after the client had given up, so the
 * same key going again is the retry it should be. Only the client can say so: its timer starts before the
 * request reaches the portal (waiting for a socket, connecting, the stand-in's busy event loop), so an answer
 * the portal finished well inside PORTAL_TIMEOUT_MS of the request's arrival may still come too late.
 */
function timedOutBeforeAnswer(
  pushId: string,
  [first, next]: [number, number],
  claims: Claim[],
  failed: FailedPush[],
): boolean {
  const tried = claimBefore(claims, first);
  const again = claimBefore(claims, next);
  if (tried === undefined || again === undefined || again.claim === tried.claim) return false;
  const pid = holderPid(tried.holder);
  return failed.some(
    (f) =>
      f.pid === pid && f.pushId === pushId && f.attempts === tried.attempt && CLIENT_TIMEOUT.test(f.reason),
  );
}

function shown(put: AnyPut): string {
  const { s4ChangedAt: _, ...rest } = put.body ?? { s4ChangedAt: null };
  return JSON.stringify(rest);
}
