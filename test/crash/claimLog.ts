// Every claim of an email or a push during a run, with the instance that made it: a trigger the suite adds to
// its own database copies each claim's lease holder (leased_by) into a table of its own. The service's rows
// keep only the last claim; a resend is judged by the claim it went out under.
import type pg from 'pg';
import type { Claim } from './holderCrash.js';

const INSTALL = `
  create table crash_suite_claim (
    outbox text not null,
    key text not null,
    claim integer not null,
    attempt integer not null,
    holder text,
    at timestamptz not null default clock_timestamp()
  );
  create function crash_suite_mail_claimed() returns trigger language plpgsql as $$
    begin
      insert into crash_suite_claim (outbox, key, claim, attempt, holder)
        values ('mail', new.message_id, new.attempts, new.attempts, new.leased_by);
      return null;
    end $$;
  create trigger crash_suite_mail_claimed after update of attempts on mail_outbox
    for each row when (new.attempts > old.attempts) execute function crash_suite_mail_claimed();
  create function crash_suite_push_claimed() returns trigger language plpgsql as $$
    begin
      insert into crash_suite_claim (outbox, key, claim, attempt, holder)
        values ('push', new.push_id::text, new.claims, new.attempts, new.leased_by);
      return null;
    end $$;
  create trigger crash_suite_push_claimed after update of claims on portal_push
    for each row when (new.claims > old.claims) execute function crash_suite_push_claimed();`;

/** Installs the trigger; the service's migrations must have run (an instance has started). */
export async function recordClaims(pool: pg.Pool): Promise<void> {
  await pool.query(INSTALL);
}

/** The claims of each email (by Message-ID) or push (by Idempotency-Key), in the order they were made. */
export async function claimsOf(pool: pg.Pool, outbox: 'mail' | 'push'): Promise<Map<string, Claim[]>> {
  const { rows } = await pool.query<Claim & { key: string }>(
    `select key, claim, attempt, holder, (extract(epoch from at) * 1000)::float8 as "at"
     from crash_suite_claim where outbox = $1::text order by key, claim`,
    [outbox],
  );
  const claims = new Map<string, Claim[]>();
  for (const { key, ...claim } of rows) claims.set(key, [...(claims.get(key) ?? []), claim]);
  return claims;
}
