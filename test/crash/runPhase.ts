// One phase of a crash run: S/4HANA takes on the phase's changes, its events are published while its planned
// faults strike, and once everything settled the portal, the portal's API, the new emails and the dead letters
// are checked. Findings and counts go to the run's state.
import { setTimeout as sleep } from 'node:timers/promises';
import { S4_SOURCE } from '../../sandbox/s4Events.js';
import type { SalesOrderState } from '../../sandbox/s4Server.js';
import { parseStamp } from '../../src/reconcile/stamp.js';
import { type ExpectedCaseStatus, expectedCase } from './caseStatusTable.js';
import {
  checkCaseMail,
  checkCases,
  checkDeadLetters,
  checkMail,
  checkPortal,
  type ExpectedPortal,
  unprocessedIdentities,
} from './checks.js';
import { performAction } from './performAction.js';
import { checkCaseApi, checkPortalApi } from './portalChecks.js';
import { checkRepairs, type DroppedChange, reconciledIds } from './reconcileChecks.js';
import type { ReturnChange } from './returnLoad.js';
import type { RunState } from './runState.js';
import { expectedPortal, type Phase } from './scenario.js';
import { firstMailOf, waitUntilRepaired, waitUntilSettled } from './settle.js';
import type { Rig } from './startRig.js';

export interface PhaseOptions {
  settleTimeoutMs: number;
  progress: (line: string) => void;
}

export async function runPhase(rig: Rig, run: RunState, phase: Phase, options: PhaseOptions): Promise<void> {
  const { smtp, portal, pool, queue } = rig;
  const { report } = run;
  const phaseStarted = Date.now();
  const mailsBefore = smtp.messages.length;
  const alreadyRefusedBefore = rig.fleet.tally.alreadyRefused;
  const dropped: DroppedChange[] = [];
  const changed = expectChanges(rig, run, phase, dropped);
  const changedCases = expectCaseChanges(rig, run, phase, dropped);
  for (const { salesOrder, failingCalls } of phase.s4Outages)
    rig.s4Faults.orders.outage(salesOrder, failingCalls);
  for (const { customerReturn, failingCalls } of phase.returnOutages)
    rig.s4Faults.returns.outage(customerReturn, failingCalls);

  const ended = { failovers: 0, postgresRestarts: 0 };
  const actions = phase.actions.map(async (action) => {
    await sleep(action.atMs);
    const fault = await performAction(rig, run, action, options.progress);
    if (fault === 'failover') ended.failovers++;
    if (fault === 'postgres restart') ended.postgresRestarts++;
  });
  const publishing = phase.batches.map(async (batch, b) => {
    await sleep(b * phase.batchGapMs);
    // The aimed order's follow-up waits for the email of its first state: two emails of one order, in order.
    if (b === phase.batches.length - 1 && phase.aimedOrder !== undefined) {
      const mailed = await firstMailOf(phase.aimedOrder, () => smtp.messages.slice(mailsBefore));
      if (!mailed)
        options.progress(`phase ${phase.index}: no email of ${phase.aimedOrder} before its follow-up`);
    }
    for (const change of phase.changes) if (change.batch === b && b > 0) takeOnOrder(rig, change, dropped);
    for (const change of phase.returnChanges) if (change.batch === b && b > 0) takeOn(rig, change, dropped);
    await rig.publisher.send(
      queue.address,
      batch.map((message) => ({ body: message.body, contentType: message.contentType })),
    );
  });
  await Promise.all([...actions, ...publishing]);
  await rig.fleet.allReady(60_000);

  const settleStarted = Date.now();
  const unsettled = await waitUntilSettled(pool, queue.name, phase.identities, options.settleTimeoutMs);
  // Changes without events reach the portal by the next reconciliation runs, after the events settled.
  const portalChecks = async () => [
    ...(await checkPortal(pool, run.expected)),
    ...checkPortalApi(portal, run.expected),
    ...(await checkCases(pool, run.expectedCases)),
    ...checkCaseApi(portal, run.expectedCases),
  ];
  const unrepaired =
    unsettled.length > 0 ? [] : await waitUntilRepaired(pool, portalChecks, options.settleTimeoutMs);
  const settleMs = Date.now() - settleStarted;
  const phaseFindings = [...unsettled, ...unrepaired, ...(await portalChecks())];
  const phaseMails = smtp.messages.slice(mailsBefore);
  phaseFindings.push(...checkMail(phaseMails, changed, run.knownMail));
  phaseFindings.push(...checkCaseMail(phaseMails, changedCases, run.knownMail));
  for (const salesOrder of changed.keys()) {
    const ids = new Set(
      phaseMails.filter((m) => m.headers['x-sales-order'] === salesOrder).map((m) => m.messageId),
    );
    if (ids.size > 1) report.emails.ordersWithTwoInAPhase++;
    if (ids.size > 1 && salesOrder === phase.aimedOrder) report.emails.aimedOrdersMailedTwice++;
  }
  const letters = await checkDeadLetters(
    pool,
    await queue.drainDeadLetters(),
    phase.malformed,
    run.deadLetterId,
    rig.fleet.tally.alreadyRefused - alreadyRefusedBefore,
  );
  run.deadLetterId = letters.lastId;
  phaseFindings.push(...letters.findings);
  phaseFindings.push(...checkRepairs(dropped, await reconciledIds(pool, S4_SOURCE)));
  report.reconcile.dropped += dropped.length;
  const lost = await unprocessedIdentities(pool, phase.identities);
  report.events.lost += lost.length;
  run.findings.push(...phaseFindings.map((finding) => `phase ${phase.index}: ${finding}`));

  report.events.distinct += phase.counts.events;
  report.events.published += phase.counts.copies + phase.malformed.length;
  report.events.duplicateCopies += phase.counts.duplicateCopies;
  report.events.malformed += phase.malformed.length;
  report.events.ofOtherTypes += phase.counts.eventsOfOtherTypes;
  report.emails.expected += [...changed.values(), ...changedCases.values()].reduce(
    (n, states) => n + states.length,
    0,
  );
  report.phases.push({
    index: phase.index,
    changes: changed.size,
    settleMs,
    findings: phaseFindings.length,
    ...ended,
  });
  options.progress(
    `phase ${phase.index}: ${phase.counts.copies + phase.malformed.length} messages, ${changed.size} emailed ` +
      `changes, ${changedCases.size} emailed case changes, ${phase.actions.map((a) => a.kind).join(', ')}; settled in ${settleMs} ms, ` +
      `${Date.now() - phaseStarted} ms in all, ${phaseFindings.length} findings`,
  );
}

/**
 * Sets the first batch's states in S/4HANA and records what the portal must show afterwards. Returns, per order,
 * the states of this phase that are real changes, in the order S/4HANA takes them on.
 */
function expectChanges(
  rig: Rig,
  run: RunState,
  phase: Phase,
  dropped: DroppedChange[],
): Map<string, ExpectedPortal[]> {
  const changed = new Map<string, ExpectedPortal[]>();
  for (const change of phase.changes) {
    const { state, batch } = change;
    if (batch === 0) takeOnOrder(rig, change, dropped);
    const before = run.expected.get(state.salesOrder);
    const after = expectedPortal(state);
    run.expected.set(state.salesOrder, after);
    if (before === undefined || before.portalStatus !== after.portalStatus || before.date !== after.date) {
      changed.set(state.salesOrder, [...(changed.get(state.salesOrder) ?? []), after]);
    }
  }
  return changed;
}

/**
 * Sets the first batch's return states in S/4HANA and deletes the returns the phase deletes; records the case
 * each must end as (Withdrawn, with its values, once deleted). Returns, per return, the case status it changed
 * to, if it did.
 */
function expectCaseChanges(
  rig: Rig,
  run: RunState,
  phase: Phase,
  dropped: DroppedChange[],
): Map<string, ExpectedCaseStatus[]> {
  const changed = new Map<string, ExpectedCaseStatus[]>();
  for (const change of phase.returnChanges) {
    if (change.batch === 0) takeOn(rig, change, dropped);
    const { customerReturn } = change.state;
    const before = run.expectedCases.get(customerReturn);
    const after = expectedCase(change.state, change.deleted);
    run.expectedCases.set(customerReturn, after);
    if (before?.caseStatus !== after.caseStatus) changed.set(customerReturn, [after.caseStatus]);
  }
  return changed;
}

/** S/4HANA takes an order's change on, stamped by its clock; a change without events is noted as dropped. */
function takeOnOrder(
  rig: Rig,
  change: { state: SalesOrderState; dropped?: boolean },
  dropped: DroppedChange[],
): void {
  const lastChangeDateTime = rig.s4Clock.stamp('salesOrder');
  rig.s4.setOrder({ ...change.state, lastChangeDateTime });
  if (change.dropped)
    dropped.push({
      family: 'salesOrder',
      key: change.state.salesOrder,
      stamp: parseStamp(lastChangeDateTime) as string,
    });
}

function takeOn(rig: Rig, change: ReturnChange, dropped: DroppedChange[]): void {
  if (change.deleted) {
    rig.s4.returns.deleteReturn(change.state.customerReturn);
    return;
  }
  const lastChangeDateTime = rig.s4Clock.stamp('customerReturn');
  rig.s4.returns.setReturn({ ...change.state, lastChangeDateTime });
  if (change.dropped) {
    const stamp = parseStamp(lastChangeDateTime) as string;
    dropped.push({ family: 'customerReturn', key: change.state.customerReturn, stamp });
  }
}
