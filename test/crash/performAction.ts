// The faults a phase plans, done to the running rig: a SIGKILL and restart, a database failover, a PostgreSQL
// restart or dropped broker connections. Each is counted in the run's report; the phase counts what ended the
// service's sessions.
import { setTimeout as sleep } from 'node:timers/promises';
import { dropBrokerConnections } from './brokerControl.js';
import { runHolder } from './reconcileLoad.js';
import type { RunState } from './runState.js';
import type { PlannedAction } from './scenario.js';
import { terminateSessions } from './sessionTerminator.js';
import type { Rig } from './startRig.js';

/** A fault that ended sessions of the service: a failover that terminated at least one, or a restart. */
export type SessionsEnded = 'failover' | 'postgres restart';

export async function performAction(
  rig: Rig,
  run: RunState,
  action: PlannedAction,
  progress: (line: string) => void,
): Promise<SessionsEnded | undefined> {
  const { fleet } = rig;
  const { report } = run;
  if (action.kind === 'kill') {
    const holder = action.atRun ? await instanceRunning(rig) : undefined;
    const running = fleet.slots.filter((slot) => fleet.isRunning(slot));
    const slot = holder ?? running[action.pick % Math.max(1, running.length)];
    if (slot === undefined || !(await fleet.kill(slot))) return undefined;
    if (holder !== undefined) report.reconcile.killsAtRun++;
    await sleep(action.pauseMs);
    await fleet.restart(slot);
    return undefined;
  }
  if (action.kind === 'terminate sessions') {
    // A failover planned while the suite restarts PostgreSQL finds no server to ask: that one is skipped.
    const done = await terminateSessions(rig.pool, action.aim ?? 'any', rig.nextMailAcceptance).catch(
      (err) => {
        progress(`database failover skipped: ${(err as Error).message} (PostgreSQL is restarting)`);
        return undefined;
      },
    );
    if (done === undefined) return undefined;
    const { faults } = report;
    faults.sessionTerminations++;
    faults.sessionsTerminated += done.sessions;
    faults.terminatedWhile.transaction += done.inTransaction;
    faults.terminatedWhile.retention += done.retention;
    if (done.aim === 'mail' && done.hit) faults.atMailAcceptance++;
    progress(
      `database failover (${done.aim}${done.hit ? '' : ', moment not seen'}): ${done.sessions} sessions ` +
        `terminated, ${done.inTransaction} in a transaction, ${done.retention} in a retention pass`,
    );
    return done.sessions > 0 ? 'failover' : undefined;
  }
  if (action.kind === 'postgres restart') {
    const from = Date.now();
    await rig.postgres.restart(action.pauseMs);
    run.restarts.push({ from, to: Date.now() });
    report.faults.postgresRestarts++;
    report.faults.postgresDownMs += Date.now() - from;
    return 'postgres restart';
  }
  const dropped = await dropBrokerConnections(() => fleet.pids());
  report.faults.brokerDrops++;
  report.faults.brokerConnectionsDropped += dropped.destroyed;
  progress(
    `broker drop: ${dropped.destroyed} connections of ports ${dropped.ports.join(', ')} ` +
      `(named by the broker: ${dropped.seenByBroker.join(', ') || 'none'})`,
  );
  return undefined;
}

// Runs come every few seconds on each instance: one is waited for this long.
const RUN_WAIT_MS = 12_000;

/** The slot of the instance running a reconciliation run, once one runs; undefined if none comes in time. */
async function instanceRunning(rig: Rig): Promise<string | undefined> {
  const postgresPort = Number(new URL(rig.postgres.url).port);
  const deadline = Date.now() + RUN_WAIT_MS;
  while (Date.now() < deadline) {
    const pid = await runHolder(rig.pool, postgresPort, rig.fleet.pids()).catch(() => undefined);
    const slot = pid === undefined ? undefined : rig.fleet.slotOf(pid);
    if (slot !== undefined) return slot;
    await sleep(30);
  }
  return undefined;
}
