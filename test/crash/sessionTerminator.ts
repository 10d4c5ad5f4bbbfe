// What a managed PostgreSQL does at failover, minor-version patching and maintenance: it terminates every session
// of the service's database (pg_terminate_backend), whatever each was doing. A termination is aimed at a moment,
// so that over a run it meets the places that hold a connection: any moment at all, an open transaction, a
// retention pass holding its session lock, the mail sender right after the relay accepted an email (about to
// record it as sent). It waits a few seconds for its moment, then terminates anyway, and reports what the
// sessions were doing when they went.
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { RETENTION_LOCK } from '../../src/maintenance/retention.js';
import type { TerminationAim } from './scenario.js';

/** The suite's own sessions carry this name and are spared: only the service loses its connections. */
export const SUITE_APPLICATION = 'fon-crash-suite';

export interface Termination {
  at: number;
  aim: TerminationAim;
  /** The aimed-at moment was seen; false when the wait ran out and the sessions were terminated anyway. */
  hit: boolean;
  sessions: number;
  inTransaction: number;
  retention: number;
}

/** Resolves when the mail relay next accepts an email. */
export type NextMailAcceptance = () => Promise<void>;

// Moments seen in the database itself; the mail moment is seen at the relay.
const MOMENT: Record<Exclude<TerminationAim, 'mail'>, string> = {
  any: 'bool_or(true)',
  transaction: 'bool_or("inTransaction")',
  retention: 'bool_or("retention")',
};

// One statement looks and terminates, so the moment seen is the moment hit. A statement inside an explicit
// transaction started after the transaction did; an auto-commit statement started with it.
const terminateWhen = (aim: Exclude<TerminationAim, 'mail'>) => `
  with service as (
    select a.pid,
           a.state = 'idle in transaction' or (a.state = 'active' and a.xact_start < a.query_start) as "inTransaction",
           exists (select from pg_locks l where l.pid = a.pid and l.locktype = 'advisory' and l.granted
                     and l.objid = $1::int) as "retention"
      from pg_stat_activity a
     where a.datname = current_database() and a.backend_type = 'client backend' and a.application_name <> $2::text
  )
  select "inTransaction", "retention", pg_terminate_backend(pid) as "terminated"
    from service
   where $3::boolean or (select ${MOMENT[aim]} from service)`;

interface Row {
  inTransaction: boolean;
  retention: boolean;
  terminated: boolean;
}

/**
 * Terminates every session of the service once `aim`'s moment is seen, or after `waitMs` regardless. The mail
 * moment is waited for longer: a phase's emails may all wait on reads or leases for several seconds.
 */
export async function terminateSessions(
  pool: pg.Pool,
  aim: TerminationAim,
  nextMailAcceptance: NextMailAcceptance,
  waitMs = aim === 'mail' ? 15_000 : 3000,
): Promise<Termination> {
  const query = (moment: Exclude<TerminationAim, 'mail'>, force: boolean) =>
    whileRestarting(() => pool.query<Row>(terminateWhen(moment), [RETENTION_LOCK, SUITE_APPLICATION, force]));
  let rows: Row[] = [];
  let hit: boolean;
  if (aim === 'mail') {
    const patience = new AbortController();
    hit = await Promise.race([
      nextMailAcceptance().then(() => true),
      sleep(waitMs, false, { signal: patience.signal }).catch(() => false),
    ]);
    patience.abort();
    ({ rows } = await query('any', true));
  } else {
    const deadline = Date.now() + waitMs;
    let force = false;
    while (rows.length === 0 && !force) {
      force = Date.now() > deadline;
      ({ rows } = await query(aim, force));
    }
    hit = !force;
  }
  const count = (field: keyof Row) => rows.filter((row) => row.terminated && row[field]).length;
  return {
    at: Date.now(),
    aim,
    hit,
    sessions: count('terminated'),
    inTransaction: count('inTransaction'),
    retention: count('retention'),
  };
}

/**
 * The suite's own PostgreSQL restart fault may run in the same phase: then the suite's connection is refused or
 * cut too. A failover is terminated sessions of a running server, so wait for the server to answer again
 * (restarts last a few seconds) instead of failing the run on the suite's own connection.
 */
async function whileRestarting<T>(work: () => Promise<T>, patienceMs = 30_000): Promise<T> {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    try {
      return await work();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}
