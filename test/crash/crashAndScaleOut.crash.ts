// Nothing lost, nothing done twice: several instances of the compiled service on one queue, killed and
// restarted throughout, while S/4HANA fails or hangs, the mail relay refuses, PostgreSQL restarts, the database
// terminates every session of the service (a managed database's failover) and the broker drops the service's
// connections. No instance may exit unless the suite killed it. Replay a run with CRASH_SEED=<seed> (printed first and last).
import { expect, it } from 'vitest';
import { runCrashScenario } from './crashRun.js';
import { phasesWithoutFailover } from './phaseFailovers.js';
import { seedFrom } from './random.js';
import { formatSummary } from './report.js';

it('applies every event once, delivers every email it queues and pushes every state to the portal, repeating one only after its holder crashed, while instances crash and dependencies fail', async () => {
  const seed = seedFrom(process.env.CRASH_SEED);
  const progress = (line: string) => console.log(`[crash] ${line}`);
  progress(`seed ${seed} (replay with CRASH_SEED=${seed})`);
  const report = await runCrashScenario({
    seed,
    instances: 3,
    orders: 60,
    phases: 6,
    source: process.env.CRASH_SOURCE_DIR,
    settleTimeoutMs: Number(process.env.CRASH_SETTLE_MS ?? 150_000),
    progress,
  });
  console.log(formatSummary(report));

  expect(report.findings).toEqual([]);
  expect(report.events.lost).toBe(0);
  expect(report.kills).toBeGreaterThanOrEqual(10);
  expect(report.faults.postgresRestarts).toBe(1);
  // The aimed faults happened: a failover that terminated sessions in every phase (the one that restarts
  // PostgreSQL excused), one right after the relay accepted an email, and an order emailed twice in one phase
  // (its follow-up waited for the first email).
  expect(phasesWithoutFailover(report.phases)).toEqual([]);
  expect(report.faults.sessionsTerminated).toBeGreaterThan(0);
  expect(report.faults.atMailAcceptance).toBeGreaterThanOrEqual(1);
  expect(report.emails.aimedOrdersMailedTwice).toBeGreaterThanOrEqual(1);
  expect(report.unplannedExits).toEqual([]);
  expect(report.faults.brokerConnectionsDropped).toBeGreaterThan(0);
  // Every order's state reached the portal's API (checked per phase); some pushes met a 503 or a hang.
  expect(report.portal.pushes).toBeGreaterThan(0);
  expect(report.portal.unavailable + report.portal.hang).toBeGreaterThan(0);
  // Returns were read over both APIs and met S/4HANA's faults; a deleted one's case ended withdrawn (checked
  // per phase against the plan, which deletes one in every run).
  expect(report.cases.requests.v2).toBeGreaterThan(0);
  expect(report.cases.requests.v4).toBeGreaterThan(0);
  expect(report.cases.s4Unavailable + report.cases.s4Hang + report.cases.s4OutageCalls).toBeGreaterThan(0);
  expect(report.cases.withdrawn).toBeGreaterThanOrEqual(1);
  // Reconciliation ran beside the events: changes without events were repaired (checked per phase), and at
  // least one kill landed on the instance running a run.
  expect(report.reconcile.dropped).toBeGreaterThan(0);
  expect(report.reconcile.done).toBeGreaterThan(0);
  expect(report.reconcile.killsAtRun).toBeGreaterThanOrEqual(1);
});
