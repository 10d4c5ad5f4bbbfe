// Whose crash may send an email or a push again. Every claim records its instance (leased_by); the suite logs
// each claim (claimLog.ts). A delivery went out under the last claim made before it, and a second delivery of
// the same Message-ID or Idempotency-Key under a later claim is allowed only when the first claim's holder was
// killed between the two claims: then its `sent` mark or booking may never have been written.
// A database failover (every session terminated) explains nothing: the mark and the booking are retried on a
// fresh connection for several seconds (MARK_RETRY in mailSender.ts, BOOK_RETRY in portalSender.ts), and a
// termination is over at once. A PostgreSQL restart can outlast those retries, so it explains one repeat whose
// two claims it falls between, as a kill of the holder would.

export interface Claim {
  claim: number;
  /** The row's attempts after this claim, the number its sender logs (a push counts afresh for each new state). */
  attempt: number;
  /** The claiming instance, `host:pid:random` (src/leasedOutbox/leaseHolder.ts). */
  holder: string | null;
  at: number;
}

export interface Kill {
  pid: number;
  at: number;
}

export interface Outage {
  from: number;
  to: number;
}

/** The claim a delivery at `at` went out under: the last one made before it. */
export function claimBefore(claims: Claim[], at: number): Claim | undefined {
  return claims.filter((claim) => claim.at <= at).at(-1);
}

export function holderPid(holder: string | null): number | undefined {
  const pid = Number(holder?.split(':').at(-2));
  return Number.isInteger(pid) ? pid : undefined;
}

/**
 * Why a delivery made under `first` went again under `next`: a kill of `first`'s holder between the two
 * claims, or a PostgreSQL restart there. Undefined when neither happened: the repeat is a finding.
 */
export function repeatCause(
  first: Claim,
  next: Claim,
  kills: Kill[],
  restarts: Outage[],
): string | undefined {
  const pid = holderPid(first.holder);
  const kill = kills.find((k) => k.pid === pid && k.at >= first.at && k.at <= next.at);
  if (kill !== undefined) return `its holder ${first.holder} was killed`;
  const restart = restarts.find((r) => r.from <= next.at && r.to >= first.at);
  if (restart !== undefined) return 'PostgreSQL restarted while its sent mark was due';
  return undefined;
}

/**
 * Each repeat in a sequence of deliveries of one key (`times`, in order): the claims they went out under, and
 * why the later one came. Returns one finding per repeat that its holder's crash does not explain.
 */
export function judgeRepeats(
  what: string,
  times: number[],
  claims: Claim[],
  kills: Kill[],
  restarts: Outage[],
): { causes: string[]; findings: string[] } {
  const causes: string[] = [];
  const findings: string[] = [];
  for (let i = 1; i < times.length; i++) {
    const first = claimBefore(claims, times[i - 1] as number);
    const next = claimBefore(claims, times[i] as number);
    if (first === undefined || next === undefined) {
      findings.push(`${what}: delivery ${i + 1} has no claim recorded before it`);
    } else if (next.claim === first.claim) {
      findings.push(`${what}: delivered twice under one claim of ${first.holder}`);
    } else {
      const cause = repeatCause(first, next, kills, restarts);
      if (cause === undefined)
        findings.push(`${what}: delivered again without a crash of its holder ${first.holder}`);
      else causes.push(cause);
    }
  }
  return { causes, findings };
}
