// What a managed PostgreSQL does at failover, minor-version patching and maintenance: it terminates every session
// of the service's database (pg_terminate_backend), whatever each was doing. A termination is aimed at a moment,
// so that over a run it meets the places where a client is checked out of the pool: any moment at all, an open
// transaction, a retention pass holding its session lock, the mail sender querying the outbox. It waits a few
// seconds for its moment, then terminates anyway, and reports what the sessions were doing when they went.
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
  mail: number;
}

const MOMENT: Record<TerminationAim, string> = {
  any: 'bool_or(true)',
  transaction: 'bool_or("inTransaction")',
  retention: 'bool_or("retention")',
  mail: 'bool_or("mail")',
};

// One statement looks and terminates, so the moment seen is the moment hit. A statement inside an explicit
// transaction started after the transaction did; an auto-commit statement started with it.
const terminateWhen = (aim: TerminationAim) => `
  with service as (
    select a.pid,
           a.state = 'idle in transaction' or (a.state = 'active' and a.xact_start < a.query_start) as "inTransaction",
           exists (select from pg_locks l where l.pid = a.pid and l.locktype = 'advisory' and l.granted
                     and l.objid = $1::int) as "retention",
           a.state = 'active' and a.query like '%mail_outbox%' as "mail"
      from pg_stat_activity a
     where a.datname = current_database() and a.backend_type = 'client backend' and a.application_name <> $2::text
  )
  select "inTransaction", "retention", "mail", pg_terminate_backend(pid) as "terminated"
    from service
   where $3::boolean or (select ${MOMENT[aim]} from service)`;

interface Row {
  inTransaction: boolean;
  retention: boolean;
  mail: boolean;
  terminated: boolean;
}

/** Terminates every session of the service once `aim`'s moment is seen, or after `waitMs` regardless. */
export async function terminateSessions(
  pool: pg.Pool,
  aim: TerminationAim,
  waitMs = 3000,
): Promise<Termination> {
  const deadline = Date.now() + waitMs;
  let rows: Row[] = [];
  let force = false;
  while (rows.length === 0 && !force) {
    force = Date.now() > deadline;
    ({ rows } = await pool.query<Row>(terminateWhen(aim), [RETENTION_LOCK, SUITE_APPLICATION, force]));
  }
  const count = (field: keyof Row) => rows.filter((row) => row.terminated && row[field]).length;
  return {
    at: Date.now(),
    aim,
    hit: !force,
    sessions: count('terminated'),
    inTransaction: count('inTransaction'),
    retention: count('retention'),
    mail: count('mail'),
  };
}
