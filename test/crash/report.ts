// What a crash run reports: counts of what was sent, broken and received, and every finding.
import type { Resend } from './emailEndings.js';
import type { StopReport } from './fleet.js';
import type { PhaseFailovers } from './phaseFailovers.js';
import type { RepeatedPut } from './portalChecks.js';

export interface CrashReport {
  seed: number;
  seconds: number;
  findings: string[];
  logDir: string;
  events: {
    distinct: number;
    published: number;
    duplicateCopies: number;
    malformed: number;
    ofOtherTypes: number;
    deliveriesHandled: number;
    redeliveries: number;
    released: number;
    releaseReasons: Record<string, number>;
    lost: number;
  };
  kills: number;
  unplannedExits: Array<{ slot: string; code: number | null; why: string | undefined }>;
  faults: {
    s4Unavailable: number;
    s4Hang: number;
    s4OutageCalls: number;
    smtpRefused: number;
    postgresRestarts: number;
    postgresDownMs: number;
    brokerDrops: number;
    brokerConnectionsDropped: number;
    amqpReconnects: number;
    /** Database failovers: every session of the service's database terminated at once. */
    sessionTerminations: number;
    sessionsTerminated: number;
    /** Of those sessions: in an open transaction, holding the retention lock. */
    terminatedWhile: { transaction: number; retention: number };
    /** Failovers right after the mail relay accepted an email, as its sender was about to record it as sent. */
    atMailAcceptance: number;
  };
  emails: {
    expected: number;
    received: number;
    distinct: number;
    resends: Resend[];
    parked: number;
    /** Orders that got two emails in one phase: their order of arrival is checked. */
    ordersWithTwoInAPhase: number;
    /** Of those, the phases' aimed orders, whose follow-up waited for the email of their first state. */
    aimedOrdersMailedTwice: number;
    /** From queueing to the relay's first acceptance, the longest of the run. */
    longestDelay: { ms: number; messageId: string; salesOrder: string; claims: number } | undefined;
  };
  /**
   * The warranty cases: returns planned, cases withdrawn, emails about cases (distinct Message-IDs), PUTs and
   * pushes of cases, the requests for returns the stand-in received by API (collection reads among them), and
   * the S/4HANA faults their reads met.
   */
  cases: {
    returns: number;
    withdrawn: number;
    emails: number;
    puts: number;
    pushes: number;
    requests: { v2: number; v4: number; collection: number };
    s4Unavailable: number;
    s4Hang: number;
    s4OutageCalls: number;
  };
  /**
   * PUTs of orders the portal stand-in received, distinct Idempotency-Keys, faults it answered (orders' and
   * cases'), repeats after an answer (orders' and cases').
   */
  portal: { puts: number; pushes: number; unavailable: number; hang: number; repeats: RepeatedPut[] };
  /**
   * Reconciliation: changes S/4HANA published no event for, runs by how they ended, kills of the instance
   * running a run while its row was `running`, and each family's mark at the end.
   */
  reconcile: {
    dropped: number;
    runs: number;
    done: number;
    failed: number;
    killsAtRun: number;
    marks: string[];
  };
  phases: Array<PhaseFailovers & { changes: number; settleMs: number; findings: number }>;
  shutdown: StopReport[];
}

export function emptyReport(seed: number, logDir: string): CrashReport {
  return {
    seed,
    seconds: 0,
    findings: [],
    logDir,
    events: {
      distinct: 0,
      published: 0,
      duplicateCopies: 0,
      malformed: 0,
      ofOtherTypes: 0,
      deliveriesHandled: 0,
      redeliveries: 0,
      released: 0,
      releaseReasons: {},
      lost: 0,
    },
    kills: 0,
    unplannedExits: [],
    faults: {
      s4Unavailable: 0,
      s4Hang: 0,
      s4OutageCalls: 0,
      smtpRefused: 0,
      postgresRestarts: 0,
      postgresDownMs: 0,
      brokerDrops: 0,
      brokerConnectionsDropped: 0,
      amqpReconnects: 0,
      sessionTerminations: 0,
      sessionsTerminated: 0,
      terminatedWhile: { transaction: 0, retention: 0 },
      atMailAcceptance: 0,
    },
    emails: {
      expected: 0,
      received: 0,
      distinct: 0,
      resends: [],
      parked: 0,
      ordersWithTwoInAPhase: 0,
      aimedOrdersMailedTwice: 0,
      longestDelay: undefined,
    },
    cases: {
      returns: 0,
      withdrawn: 0,
      emails: 0,
      puts: 0,
      pushes: 0,
      requests: { v2: 0, v4: 0, collection: 0 },
      s4Unavailable: 0,
      s4Hang: 0,
      s4OutageCalls: 0,
    },
    portal: { puts: 0, pushes: 0, unavailable: 0, hang: 0, repeats: [] },
    reconcile: { dropped: 0, runs: 0, done: 0, failed: 0, killsAtRun: 0, marks: [] },
    phases: [],
    shutdown: [],
  };
}

/** The run in a few lines: what was sent, what was broken, what came out, and how to replay it. */
export function formatSummary(report: CrashReport): string {
  const { events, faults, emails, cases } = report;
  const reasons = Object.entries(events.releaseReasons)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  const resendCauses = emails.resends.map(
    (r) => `${r.messageId} (order ${r.salesOrder}, ${r.receipts}x, ${r.cause})`,
  );
  const lines = [
    `crash suite: seed ${report.seed} (replay with CRASH_SEED=${report.seed}), ${report.seconds} s`,
    `events: ${events.distinct} distinct, ${events.published} messages published ` +
      `(${events.duplicateCopies} duplicate copies, ${events.malformed} malformed, ${events.ofOtherTypes} of other types); ` +
      `${events.deliveriesHandled} deliveries handled, ${events.redeliveries} redeliveries handled, ` +
      `${events.released} released${reasons ? ` (${reasons})` : ''}`,
    `kills: ${report.kills} SIGKILL; exits nobody asked for: ${report.unplannedExits.length}` +
      (report.unplannedExits.length > 0
        ? ` (${report.unplannedExits.map((e) => `${e.slot} code ${e.code}: ${e.why ?? 'no fatal line'}`).join('; ')})`
        : ''),
    `faults: S/4HANA 503 ${faults.s4Unavailable} + ${faults.s4OutageCalls} in outages, S/4HANA hang ${faults.s4Hang}, ` +
      `SMTP 451 ${faults.smtpRefused}, PostgreSQL restarts ${faults.postgresRestarts} ` +
      `(${faults.postgresDownMs} ms down), broker drops ${faults.brokerDrops} ` +
      `(${faults.brokerConnectionsDropped} connections), AMQP reconnects ${faults.amqpReconnects}, ` +
      `database failovers ${faults.sessionTerminations} (${faults.sessionsTerminated} sessions terminated: ` +
      `${faults.terminatedWhile.transaction} in a transaction, ${faults.terminatedWhile.retention} in a retention ` +
      `pass; ${faults.atMailAcceptance} failovers right after the mail relay accepted an email)`,
    `emails: up to ${emails.expected} expected (states passed over may go unmailed; every email queued is received), ${emails.received} received, ${emails.distinct} distinct Message-IDs, ` +
      `${emails.resends.length} same-Message-ID resends${resendCauses.length ? `: ${resendCauses.join('; ')}` : ''}, ` +
      `${emails.parked} parked; ${emails.ordersWithTwoInAPhase} times an order got two emails in one phase ` +
      `(${emails.aimedOrdersMailedTwice} of them aimed)`,
    `longest delay from queueing an email to its arrival: ${
      emails.longestDelay === undefined
        ? 'no email'
        : `${emails.longestDelay.ms} ms (${emails.longestDelay.messageId}, order ${emails.longestDelay.salesOrder}, ` +
          `${emails.longestDelay.claims} claims)`
    }`,
    `portal pushes: ${report.portal.puts} PUTs of ${report.portal.pushes} pushes (Idempotency-Keys), ` +
      `${report.portal.unavailable} answered 503, ${report.portal.hang} hung; ${report.portal.repeats.length} ` +
      `pushes repeated after the portal's answer` +
      (report.portal.repeats.length
        ? `: ${report.portal.repeats.map((r) => `${r.idempotencyKey} (${r.about}, ${r.afterAnswer}x, ${r.cause})`).join('; ')}`
        : ''),
    `warranty cases: ${cases.returns} returns, ${cases.withdrawn} withdrawn; ${cases.emails} case emails ` +
      `(distinct Message-IDs), ${cases.puts} case PUTs of ${cases.pushes} pushes; requests for returns: ` +
      `${cases.requests.v2} over V2, ${cases.requests.v4} over V4 (${cases.requests.collection} collection reads), ` +
      `S/4HANA 503 ` +
      `${cases.s4Unavailable} + ${cases.s4OutageCalls} in outages, hang ${cases.s4Hang}`,
    `reconciliation: ${report.reconcile.dropped} changes without events, ${report.reconcile.runs} runs ` +
      `(${report.reconcile.done} done, ${report.reconcile.failed} failed), ${report.reconcile.killsAtRun} kills ` +
      `of the instance running a run; marks ${report.reconcile.marks.join(', ') || 'none'}`,
    `lost events: ${events.lost}`,
    `phases: ${report.phases.map((p) => `#${p.index} ${p.changes} changes, ${p.failovers} failovers, settled ${p.settleMs} ms`).join('; ')}`,
    `shutdown on SIGTERM: ${report.shutdown.map((s) => `${s.slot} ${s.ms} ms (exit ${s.code ?? s.signal})`).join(', ')}`,
  ];
  if (report.findings.length > 0) {
    lines.push(`findings (${report.findings.length}), logs in ${report.logDir}:`);
    lines.push(...report.findings.map((finding) => `  - ${finding}`));
  }
  return lines.join('\n');
}
