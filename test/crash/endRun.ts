// The last phases of a crash run: every instance stopped with SIGTERM, then the whole run judged (every email
// queued, every portal PUT, parked mail, exits the suite did not cause) and counted into the report.
import { S4_SOURCE } from '../../sandbox/s4Events.js';
import { isIdle, queueCounts } from '../support/queueCounts.js';
import { checkResentContent, longestDelay, outboxRows } from './checks.js';
import { claimsOf } from './claimLog.js';
import { checkEveryEmail, conversationOf } from './emailEndings.js';
import { checkPortalPuts } from './portalChecks.js';
import { checkMarks, checkRuns, reconcileMarks, reconcileRuns } from './reconcileChecks.js';
import type { RunState } from './runState.js';
import type { Rig } from './startRig.js';

const SHUTDOWN_BUDGET_MS = 10_000;

/** Stops every instance; a stop that is not clean, or a queue left holding anything, is a finding. */
export async function stopFleet(rig: Rig, run: RunState): Promise<void> {
  run.stoppingAt = Date.now();
  run.report.shutdown = await rig.fleet.stopAll(SHUTDOWN_BUDGET_MS);
  for (const stop of run.report.shutdown) {
    if (stop.stuck || stop.code !== 0) {
      run.findings.push(`instance ${stop.slot} did not stop cleanly on SIGTERM: ${JSON.stringify(stop)}`);
    }
  }
  const after = await queueCounts(rig.queue.name);
  if (!isIdle(after)) {
    run.findings.push(`after the instances stopped the queue holds ${JSON.stringify(after)}`);
  }
}

/** Judges every email and portal PUT of the run against the crashes that could excuse a repeat, and counts. */
export async function checkRun(rig: Rig, run: RunState): Promise<void> {
  const { fleet, pool, smtp, portal, smtpFaults } = rig;
  const { findings, report } = run;
  const outbox = await outboxRows(pool);
  const resends = checkEveryEmail(outbox, {
    accepted: smtpFaults.accepted,
    refusedById: smtpFaults.refusedById,
    sentLogged: fleet.tally.mailSentById,
    claims: await claimsOf(pool, 'mail'),
    kills: fleet.kills,
    restarts: run.restarts,
  });
  findings.push(...resends.findings, ...checkResentContent(smtp.messages));
  const pushes = {
    claims: await claimsOf(pool, 'push'),
    kills: fleet.kills,
    restarts: run.restarts,
    failedPushes: fleet.tally.failedPushes,
  };
  const puts = checkPortalPuts(portal.requests(), pushes);
  const casePuts = checkPortalPuts(portal.caseRequests(), pushes, 'return');
  findings.push(...puts.findings, ...casePuts.findings);
  // Every fault of the run is transient: even an email parked with its reason is one too many here.
  for (const row of outbox.filter((r) => r.state === 'parked')) {
    findings.push(`mail ${row.messageId} of ${conversationOf(row)} was parked: ${row.lastError}`);
  }
  // No instance may exit unless the suite killed it: not on a failover, a restart or a dropped connection.
  for (const exit of fleet.unplannedExits) {
    findings.push(
      `instance ${exit.slot} exited by itself (code ${exit.code ?? exit.signal}): ${exit.why ?? 'no fatal line'}`,
    );
  }

  // Every reconciliation run ended, a failed one was resumed, and no mark went past what S/4HANA wrote.
  const runs = await reconcileRuns(pool, S4_SOURCE);
  const marks = await reconcileMarks(pool, S4_SOURCE);
  const killedAt = fleet.kills.map((kill) => kill.at);
  findings.push(...checkRuns(runs, run.stoppingAt, killedAt), ...checkMarks(marks, rig.s4Clock.newest));
  report.reconcile.runs = runs.length;
  report.reconcile.done = runs.filter((r) => r.status === 'done').length;
  report.reconcile.failed = runs.filter((r) => r.status === 'failed').length;
  report.reconcile.marks = marks.map(({ family, mark }) => `${family} ${mark}`);

  const { tally } = fleet;
  report.events.deliveriesHandled =
    tally.processed + tally.duplicates + tally.released + tally.rejected + tally.alreadyRefused;
  report.events.redeliveries = report.events.deliveriesHandled - report.events.published;
  report.events.released = tally.released;
  report.events.releaseReasons = tally.releaseReasons;
  report.kills = fleet.kills.length;
  report.unplannedExits = fleet.unplannedExits.map(({ slot, code, why }) => ({ slot, code, why }));
  const orderReads = rig.s4Faults.orders.counts;
  report.faults.s4Unavailable = orderReads.unavailable;
  report.faults.s4Hang = orderReads.hang;
  report.faults.s4OutageCalls = orderReads.outage;
  report.faults.smtpRefused = smtpFaults.counts.refused;
  report.faults.amqpReconnects = tally.amqpReconnects;
  report.emails.received = smtp.messages.length;
  report.emails.distinct = new Set(smtp.messages.map((mail) => mail.messageId)).size;
  report.emails.resends = resends.resends;
  report.emails.longestDelay = longestDelay(smtpFaults.accepted, outbox);
  report.emails.parked = outbox.filter((row) => row.state === 'parked').length;
  const requests = portal.requests();
  report.portal = {
    puts: requests.length,
    pushes: new Set(requests.map((request) => request.idempotencyKey)).size,
    unavailable: rig.portalFaults.counts.unavailable,
    hang: rig.portalFaults.counts.hang,
    repeats: [...puts.repeats, ...casePuts.repeats],
  };
  const caseRequests = portal.caseRequests();
  const returnReads = rig.s4Faults.returns.counts;
  const returnRequests = rig.s4.returns.requestLog();
  report.cases = {
    returns: run.expectedCases.size,
    withdrawn: [...run.expectedCases.values()].filter((c) => c.caseStatus === 'Withdrawn').length,
    emails: new Set(
      smtp.messages.filter((m) => m.headers['x-customer-return'] !== undefined).map((m) => m.messageId),
    ).size,
    puts: caseRequests.length,
    pushes: new Set(caseRequests.map((request) => request.idempotencyKey)).size,
    requests: {
      v2: returnRequests.filter((request) => request.api === 'v2').length,
      v4: returnRequests.filter((request) => request.api === 'v4').length,
      collection: returnRequests.filter((request) => request.collection).length,
    },
    s4Unavailable: returnReads.unavailable,
    s4Hang: returnReads.hang,
    s4OutageCalls: returnReads.outage,
  };
}
