// One crash run: the compiled service as several OS processes on one queue, the suite's own PostgreSQL, the
// shared RabbitMQ (own queue), a stand-in S/4HANA whose orders change phase by phase, a real SMTP receiver.
// Each phase publishes events while instances are killed and dependencies fail, waits until everything
// settled, then checks that nothing was lost and nothing was done twice.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S4_SOURCE } from '../../sandbox/s4Events.js';
import { expectAmqp10 } from '../support/services.js';
import { checkBrokerControl } from './brokerControl.js';
import { checkRun, stopFleet } from './endRun.js';
import { baselinesDone } from './reconcileLoad.js';
import { type CrashReport, emptyReport } from './report.js';
import { runPhase } from './runPhase.js';
import type { RunState } from './runState.js';
import { planRun } from './scenario.js';
import { waitUntilRepaired } from './settle.js';
import { type Rig, startRig } from './startRig.js';

export interface CrashRunOptions {
  seed: number;
  instances: number;
  orders: number;
  phases: number;
  /** How long a phase may take to settle after its last event and fault. */
  settleTimeoutMs: number;
  /** The checkout to build and run; the repository itself unless a patched copy is to be tried. */
  source?: string;
  /** Progress lines while the run goes. */
  progress: (line: string) => void;
}

/** Start the rig and the fleet → run each phase and check it → stop the fleet and check the run → tear down. */
export async function runCrashScenario(options: CrashRunOptions): Promise<CrashReport> {
  const started = Date.now();
  await expectAmqp10();
  await checkBrokerControl();

  const runDir = await mkdtemp(join(tmpdir(), `fon-crash-${options.seed}-`));
  const cleanup: Array<() => Promise<unknown>> = [];
  const run: RunState = {
    expected: new Map(),
    expectedCases: new Map(),
    knownMail: new Set(),
    restarts: [],
    deadLetterId: 0,
    findings: [],
    report: emptyReport(options.seed, runDir),
    stoppingAt: Number.POSITIVE_INFINITY,
  };
  let completed = false;
  try {
    const rig = await startRig(options, runDir, cleanup);
    await takeBaseline(rig, run, options.settleTimeoutMs);
    const plan = planRun(options.seed, { orders: options.orders, phases: options.phases, changeShare: 0.5 });
    for (const phase of plan) await runPhase(rig, run, phase, options);
    await stopFleet(rig, run);
    await checkRun(rig, run);
    run.report.findings = run.findings;
    run.report.seconds = Math.round((Date.now() - started) / 100) / 10;
    completed = true;
    return run.report;
  } finally {
    await tearDown(cleanup, runDir, completed && run.findings.length === 0);
  }
}

/**
 * The first run of each family takes on the documents S/4HANA held before the fleet started (startRig.ts):
 * portal rows and cases, and no email. The phases check their rows from then on.
 */
async function takeBaseline(rig: Rig, run: RunState, timeoutMs: number): Promise<void> {
  for (const [key, want] of rig.baseline.orders) run.expected.set(key, want);
  for (const [key, want] of rig.baseline.cases) run.expectedCases.set(key, want);
  if (!(await baselinesDone(rig.pool, S4_SOURCE, timeoutMs))) {
    run.findings.push(`baseline: no baseline run of each family completed within ${timeoutMs} ms`);
    return;
  }
  run.findings.push(
    ...(await waitUntilRepaired(rig.pool, () => Promise.resolve([]), timeoutMs)).map((f) => `baseline: ${f}`),
  );
  for (const mail of rig.smtp.messages) {
    run.knownMail.add(mail.messageId);
    run.findings.push(`baseline: the baseline emailed ${mail.subject} (${mail.messageId})`);
  }
}

/** Stops every part that started; the instances' logs stay for diagnosis unless the run passed. */
async function tearDown(
  cleanup: Array<() => Promise<unknown>>,
  runDir: string,
  passed: boolean,
): Promise<void> {
  for (const step of cleanup) await step().catch(() => {});
  if (passed && process.env.CRASH_KEEP_LOGS !== 'true') await rm(runDir, { recursive: true, force: true });
}
