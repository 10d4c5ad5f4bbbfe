// What the fleet portal's API must hold once a phase settled, and which repeated PUTs a crash run may show.
// Like the mail checks, each returns findings instead of throwing.
import type pg from 'pg';
import type { PortalRequest, PortalServer } from '../../sandbox/portalServer.js';
import type { ExpectedCase } from './caseStatusTable.js';
import type { ExpectedPortal } from './checks.js';
import { type Claim, judgeRepeats, type Kill, type Outage } from './holderCrash.js';

export async function pendingPushes(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as "n" from portal_push where state = 'pending'`,
  );
  return rows[0]?.n ?? 0;
}

/** The portal stand-in holds S/4HANA's state of every order, as the portal table does. */
/** The portal stand-in holds S/4HANA's latest state of every warranty case, as warranty_case does. */
export function checkCaseApi(portal: PortalServer, expected: Map<string, ExpectedCase>): string[] {
  const findings: string[] = [];
  for (const [customerReturn, want] of expected) {
    const held = portal.caseState(customerReturn);
    const got = held && { caseStatus: held.caseStatus, customerReference: held.customerReference };
    if (JSON.stringify(got) !== JSON.stringify(want))
      findings.push(
        `the portal API holds case ${JSON.stringify(got)} for ${customerReturn}, S/4HANA says ${JSON.stringify(want)}`,
      );
  }
  return findings;
}

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
  salesOrder: string;
  /** PUTs with this key after one the portal had answered 2xx or 409. */
  afterAnswer: number;
  cause: string;
}

/**
 * Every PUT of the run, order by order. A PUT with a new Idempotency-Key is a new state: never one whose
 * s4ChangedAt is older than a state the portal accepted before, never the same shown values as the push before
 * it. A PUT repeating a key is a retry: after a failed try (503, a hang) that is the backoff; after the portal
 * answered (2xx, 409) the answer was never booked, which only a crash of the instance holding the push's lease
 * explains, one crash per repeat (holderCrash.ts). `claims`: each Idempotency-Key's claims (claimLog.ts).
 */
export function checkPortalPuts(
  requests: PortalRequest[],
  claims: Map<string, Claim[]>,
  kills: Kill[],
  restarts: Outage[],
): { repeats: RepeatedPut[]; findings: string[] } {
  const findings: string[] = [];
  const repeats: RepeatedPut[] = [];
  const byOrder = new Map<string, PortalRequest[]>();
  for (const request of requests)
    byOrder.set(request.salesOrder, [...(byOrder.get(request.salesOrder) ?? []), request]);
  for (const [salesOrder, puts] of byOrder) {
    let newestAccepted = '';
    const lastOfKey = new Map<string, PortalRequest>();
    let previousNew: PortalRequest | undefined;
    for (const put of puts) {
      const key = put.idempotencyKey ?? '';
      const changedAt = put.body?.s4ChangedAt ?? '';
      if (changedAt < newestAccepted)
        findings.push(`order ${salesOrder}: PUT of ${changedAt} after ${newestAccepted} was accepted`);
      if (put.status >= 200 && put.status < 300 && changedAt > newestAccepted) newestAccepted = changedAt;
      const earlier = lastOfKey.get(key);
      lastOfKey.set(key, put);
      if (earlier === undefined) {
        if (previousNew !== undefined && shown(previousNew) === shown(put))
          findings.push(`order ${salesOrder}: two pushes in a row of the same state ${shown(put)}`);
        previousNew = put;
        continue;
      }
      if (JSON.stringify(earlier.body) !== JSON.stringify(put.body))
        findings.push(`order ${salesOrder}: key ${key} was sent with two bodies`);
      const answered = (earlier.status >= 200 && earlier.status < 300) || earlier.status === 409;
      if (!answered) continue;
      const judged = judgeRepeats(
        `order ${salesOrder}: key ${key} PUT again after its answer`,
        [earlier.at, put.at],
        claims.get(key) ?? [],
        kills,
        restarts,
      );
      findings.push(...judged.findings);
      const cause = judged.causes.join(', ') || 'no crash of its holder';
      const repeat = repeats.find((r) => r.idempotencyKey === key);
      if (repeat === undefined) repeats.push({ idempotencyKey: key, salesOrder, afterAnswer: 1, cause });
      else repeat.afterAnswer++;
    }
  }
  return { repeats, findings };
}

function shown(put: PortalRequest): string {
  const { s4ChangedAt: _, ...rest } = put.body ?? ({} as NonNullable<PortalRequest['body']>);
  return JSON.stringify(rest);
}
