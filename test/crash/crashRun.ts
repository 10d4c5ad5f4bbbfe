// One crash run: the compiled service as several OS processes on one queue, the suite's own PostgreSQL, the
// shared RabbitMQ (own queue), a stand-in S/4HANA whose orders change phase by phase, a real SMTP receiver.
// Each phase publishes events while instances are killed and dependencies fail, waits until everything
// settled, then checks that nothing was lost and nothing was done twice.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startPortalServer } from '../../sandbox/portalServer.js';
import { startS4Server } from '../../sandbox/s4Server.js';
import { startSmtpServer } from '../../sandbox/smtpServer.js';
import { createPublisher, createTestQueue } from '../support/broker.js';
import { isIdle, queueCounts } from '../support/queueCounts.js';
import { serviceEnv } from '../support/serviceEnv.js';
import { expectAmqp10 } from '../support/services.js';
import { checkBrokerControl, dropBrokerConnections } from './brokerControl.js';
import {
  checkDeadLetters,
  checkMail,
  checkPortal,
  checkResentContent,
  type ExpectedPortal,
  longestDelay,
  outboxRows,
  unprocessedIdentities,
} from './checks.js';
import { claimsOf, recordClaims } from './claimLog.js';
import { checkEveryEmail } from './emailEndings.js';
import { createPortalFaults, createS4Faults, createSmtpFaults } from './faults.js';
import { createFleet } from './fleet.js';
import { checkPortalApi, checkPortalPuts } from './portalChecks.js';
import { startPostgresInstance } from './postgresInstance.js';
import { type CrashReport, emptyReport } from './report.js';
import { expectedPortal, type PlannedAction, planRun } from './scenario.js';
import { buildService } from './serviceBuild.js';
import { SUITE_APPLICATION, terminateSessions } from './sessionTerminator.js';
import { waitUntilSettled } from './settle.js';

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

const SHUTDOWN_BUDGET_MS = 10_000;

export async function runCrashScenario(options: CrashRunOptions): Promise<CrashReport> {
  const started = Date.now();
  const { progress } = options;
  await expectAmqp10();
  await checkBrokerControl();

  const runDir = await mkdtemp(join(tmpdir(), `fon-crash-${options.seed}-`));
  const cleanup: Array<() => Promise<unknown>> = [];
  const findings: string[] = [];
  let completed = false;
  try {
    progress(`building the service and starting PostgreSQL, S/4HANA and SMTP stand-ins (${runDir})`);
    // Every part that started is cleaned up at the end, also when another part failed to start.
    const owned = <T>(part: Promise<T>, stop: (value: T) => Promise<unknown>): Promise<T> =>
      part.then((value) => {
        cleanup.push(() => stop(value));
        return value;
      });
    const parts = await Promise.allSettled([
      buildService(join(runDir, 'build'), options.source),
      owned(startPostgresInstance(), (server) => server.stop()),
      owned(startS4Server(), (server) => server.close()),
      owned(startSmtpServer(), (server) => server.close()),
      owned(startPortalServer(), (server) => server.close()),
      owned(createPublisher(), (client) => client.close()),
      // A quorum queue with a delivery limit, like Event Mesh's max redelivery count in production: a broker
      // that counts redeliveries turns a hot release loop into valid events in the dead-letter queue, where
      // the checks see it (a classic queue would loop silently). The limit sits above MAX_DELIVERIES (10), so
      // the service's own count decides first, with room for deliveries returned by killed instances.
      owned(createTestQueue('fon-crash', { 'x-queue-type': 'quorum', 'x-delivery-limit': 20 }), (queue) =>
        queue.delete(),
      ),
    ]);
    const value = <T>(part: PromiseSettledResult<T>): T => {
      if (part.status === 'rejected') throw part.reason;
      return part.value;
    };
    const [mainJs, postgres, s4, smtp, portal, publisher, queue] = [
      value(parts[0]),
      value(parts[1]),
      value(parts[2]),
      value(parts[3]),
      value(parts[4]),
      value(parts[5]),
      value(parts[6]),
    ] as const;
    const pool = new pg.Pool({ connectionString: postgres.url, max: 2, application_name: SUITE_APPLICATION });
    // The suite restarts this server on purpose: idle connections failing then is expected.
    pool.on('error', () => {});
    cleanup.unshift(() => pool.end());

    const s4Faults = createS4Faults(options.seed, { unavailable: 0.12, hang: 0.03 });
    const smtpFaults = createSmtpFaults(options.seed, 0.15);
    s4.setFault(s4Faults.fn);
    // Lets a database failover strike just as an email was accepted, before its sender records it as sent.
    const acceptanceWaiters: Array<() => void> = [];
    smtp.setRefuse((mail) => {
      const decision = smtpFaults.fn(mail);
      if (decision === 'accept') for (const resolve of acceptanceWaiters.splice(0)) resolve();
      return decision;
    });
    const nextMailAcceptance = () => new Promise<void>((resolve) => acceptanceWaiters.push(resolve));
    const portalFaults = createPortalFaults(options.seed, { unavailable: 0.1, hang: 0.03 });
    portal.setFault(portalFaults.fn);

    const endpoints = serviceEnv({
      databaseUrl: postgres.url,
      s4Url: s4.url,
      smtpUrl: smtp.url,
      queueAddress: queue.address,
    });
    const fleet = createFleet({
      mainJs,
      logDir: runDir,
      count: options.instances,
      env: {
        ...endpoints,
        // Every state is pushed to the portal stand-in too; a push claimed by a killed instance goes again
        // after this lease, with the same Idempotency-Key.
        destinations: JSON.stringify([
          ...(JSON.parse(endpoints.destinations ?? '[]') as unknown[]),
          { name: 'PORTAL', url: portal.url },
        ]),
        PORTAL_DESTINATION: 'PORTAL',
        PORTAL_TIMEOUT_MS: '1000',
        PORTAL_LEASE_SECONDS: '5',
        DATABASE_POOL_SIZE: '8',
        S4_TIMEOUT_MS: '1000',
        // A mail claimed by a killed instance waits this long before another instance sends it.
        MAIL_LEASE_SECONDS: '15',
        // Passes every few seconds (they find nothing expired), so that a failover can meet one.
        RETENTION_INTERVAL_SECONDS: '2',
        LOG_LEVEL: 'debug',
      },
    });
    cleanup.unshift(() => fleet.close());
    await fleet.start();
    await recordClaims(pool);
    progress(`${options.instances} instances attached to ${queue.name}`);

    const plan = planRun(options.seed, { orders: options.orders, phases: options.phases, changeShare: 0.5 });
    const expected = new Map<string, ExpectedPortal>();
    const knownMail = new Set<string>();
    const restarts: Array<{ from: number; to: number }> = [];
    const report: CrashReport = emptyReport(options.seed, runDir);
    let deadLetterId = 0;

    const act = async (action: PlannedAction): Promise<void> => {
      if (action.kind === 'kill') {
        const running = fleet.slots.filter((slot) => fleet.isRunning(slot));
        const slot = running[action.pick % Math.max(1, running.length)];
        if (slot === undefined || !(await fleet.kill(slot))) return;
        await sleep(action.pauseMs);
        await fleet.restart(slot);
      } else if (action.kind === 'terminate sessions') {
        // A failover planned while the suite restarts PostgreSQL finds no server to ask: that one is skipped.
        const done = await terminateSessions(pool, action.aim ?? 'any', nextMailAcceptance).catch((err) => {
          progress(`database failover skipped: ${(err as Error).message} (PostgreSQL is restarting)`);
          return undefined;
        });
        if (done === undefined) return;
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
      } else if (action.kind === 'postgres restart') {
        const from = Date.now();
        await postgres.restart(action.pauseMs);
        restarts.push({ from, to: Date.now() });
        report.faults.postgresRestarts++;
        report.faults.postgresDownMs += Date.now() - from;
      } else {
        const dropped = await dropBrokerConnections(() => fleet.pids());
        report.faults.brokerDrops++;
        report.faults.brokerConnectionsDropped += dropped.destroyed;
        progress(
          `broker drop: ${dropped.destroyed} connections of ports ${dropped.ports.join(', ')} ` +
            `(named by the broker: ${dropped.seenByBroker.join(', ') || 'none'})`,
        );
      }
    };

    for (const phase of plan) {
      const phaseStarted = Date.now();
      const mailsBefore = smtp.messages.length;
      // Per order, the states of this phase that are real changes, in the order S/4HANA takes them on.
      const changed = new Map<string, ExpectedPortal[]>();
      for (const { state, batch } of phase.changes) {
        if (batch === 0) s4.setOrder(state);
        const before = expected.get(state.salesOrder);
        const after = expectedPortal(state);
        expected.set(state.salesOrder, after);
        if (
          before === undefined ||
          before.portalStatus !== after.portalStatus ||
          before.date !== after.date
        ) {
          changed.set(state.salesOrder, [...(changed.get(state.salesOrder) ?? []), after]);
        }
      }
      for (const { salesOrder, failingCalls } of phase.s4Outages) s4Faults.outage(salesOrder, failingCalls);

      const actions = phase.actions.map(async (action) => {
        await sleep(action.atMs);
        await act(action);
      });
      const publishing = phase.batches.map(async (batch, b) => {
        await sleep(b * phase.batchGapMs);
        // The aimed order's follow-up waits for the email of its first state: two emails of one order, in order.
        if (b === phase.batches.length - 1 && phase.aimedOrder !== undefined) {
          const mailed = await firstMailOf(phase.aimedOrder, () => smtp.messages.slice(mailsBefore));
          if (!mailed) progress(`phase ${phase.index}: no email of ${phase.aimedOrder} before its follow-up`);
        }
        for (const change of phase.changes) if (change.batch === b && b > 0) s4.setOrder(change.state);
        await publisher.send(
          queue.address,
          batch.map((message) => ({ body: message.body, contentType: message.contentType })),
        );
      });
      await Promise.all([...actions, ...publishing]);
      await fleet.allReady(60_000);

      const settleStarted = Date.now();
      const unsettled = await waitUntilSettled(pool, queue.name, phase.identities, options.settleTimeoutMs);
      const settleMs = Date.now() - settleStarted;
      const phaseFindings = [...unsettled];
      phaseFindings.push(...(await checkPortal(pool, expected)));
      phaseFindings.push(...checkPortalApi(portal, expected));
      const phaseMails = smtp.messages.slice(mailsBefore);
      phaseFindings.push(...checkMail(phaseMails, changed, knownMail));
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
        deadLetterId,
      );
      deadLetterId = letters.lastId;
      phaseFindings.push(...letters.findings);
      const lost = await unprocessedIdentities(pool, phase.identities);
      report.events.lost += lost.length;
      findings.push(...phaseFindings.map((finding) => `phase ${phase.index}: ${finding}`));

      report.events.distinct += phase.counts.events;
      report.events.published += phase.counts.copies + phase.malformed.length;
      report.events.duplicateCopies += phase.counts.duplicateCopies;
      report.events.malformed += phase.malformed.length;
      report.events.ofOtherTypes += phase.counts.eventsOfOtherTypes;
      report.emails.expected += [...changed.values()].reduce((n, states) => n + states.length, 0);
      report.phases.push({
        index: phase.index,
        changes: changed.size,
        settleMs,
        findings: phaseFindings.length,
      });
      progress(
        `phase ${phase.index}: ${phase.counts.copies + phase.malformed.length} messages, ${changed.size} emailed ` +
          `changes, ${phase.actions.map((a) => a.kind).join(', ')}; settled in ${settleMs} ms, ` +
          `${Date.now() - phaseStarted} ms in all, ${phaseFindings.length} findings`,
      );
    }

    report.shutdown = await fleet.stopAll(SHUTDOWN_BUDGET_MS);
    for (const stop of report.shutdown) {
      if (stop.stuck || stop.code !== 0) {
        findings.push(`instance ${stop.slot} did not stop cleanly on SIGTERM: ${JSON.stringify(stop)}`);
      }
    }
    const after = await queueCounts(queue.name);
    if (!isIdle(after)) {
      findings.push(`after the instances stopped the queue holds ${JSON.stringify(after)}`);
    }

    const outbox = await outboxRows(pool);
    const resends = checkEveryEmail(outbox, {
      accepted: smtpFaults.accepted,
      refusedById: smtpFaults.refusedById,
      sentLogged: fleet.tally.mailSentById,
      claims: await claimsOf(pool, 'mail'),
      kills: fleet.kills,
      restarts,
    });
    findings.push(...resends.findings, ...checkResentContent(smtp.messages));
    const puts = checkPortalPuts(portal.requests(), await claimsOf(pool, 'push'), fleet.kills, restarts);
    findings.push(...puts.findings);
    // Every fault of the run is transient: even an email parked with its reason is one too many here.
    for (const row of outbox.filter((r) => r.state === 'parked')) {
      findings.push(`mail ${row.messageId} of order ${row.salesOrder} was parked: ${row.lastError}`);
    }
    // No instance may exit unless the suite killed it: not on a failover, a restart or a dropped connection.
    for (const exit of fleet.unplannedExits) {
      findings.push(
        `instance ${exit.slot} exited by itself (code ${exit.code ?? exit.signal}): ${exit.why ?? 'no fatal line'}`,
      );
    }

    const { tally } = fleet;
    report.events.deliveriesHandled = tally.processed + tally.duplicates + tally.released + tally.rejected;
    report.events.redeliveries = report.events.deliveriesHandled - report.events.published;
    report.events.released = tally.released;
    report.events.releaseReasons = tally.releaseReasons;
    report.kills = fleet.kills.length;
    report.unplannedExits = fleet.unplannedExits.map(({ slot, code, why }) => ({ slot, code, why }));
    report.faults.s4Unavailable = s4Faults.counts.unavailable;
    report.faults.s4Hang = s4Faults.counts.hang;
    report.faults.s4OutageCalls = s4Faults.counts.outage;
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
      unavailable: portalFaults.counts.unavailable,
      hang: portalFaults.counts.hang,
      repeats: puts.repeats,
    };
    report.findings = findings;
    report.seconds = Math.round((Date.now() - started) / 100) / 10;
    completed = true;
    return report;
  } finally {
    for (const step of cleanup) await step().catch(() => {});
    // The instances' logs stay for diagnosis unless the run passed.
    if (completed && findings.length === 0 && process.env.CRASH_KEEP_LOGS !== 'true') {
      await rm(runDir, { recursive: true, force: true });
    }
  }
}

/** Waits until the relay has an email of the order among `mails()`; false after `timeoutMs`. */
async function firstMailOf(
  salesOrder: string,
  mails: () => Array<{ headers: Record<string, string | undefined> }>,
  timeoutMs = 10_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (mails().some((mail) => mail.headers['x-sales-order'] === salesOrder)) return true;
    await sleep(100);
  }
  return false;
}
