// How every email queued in a run ended. Each mail_outbox row, whatever state it announced (a state passed over
// by a later one included), must end received by the relay under its Message-ID exactly once, or resent once
// per crash of the instance that held its lease when it went out (holderCrash.ts), or parked with a reason.
import type { Claim, Kill, Outage } from './holderCrash.js';
import { judgeRepeats } from './holderCrash.js';

export interface QueuedMail {
  messageId: string;
  /** The order of an order's email; a case's email names its return instead. */
  salesOrder: string | null;
  customerReturn: string | null;
  state: string;
  attempts: number;
  lastError: string | null;
  queuedAt: Date;
}

/** What an email is about, as findings and the report name it: the order, or `return <customerReturn>`. */
export function conversationOf(row: QueuedMail): string {
  return row.customerReturn === null ? `${row.salesOrder}` : `return ${row.customerReturn}`;
}

export interface Resend {
  messageId: string;
  salesOrder: string;
  receipts: number;
  outboxAttempts: number;
  cause: string;
}

export interface MailEvidence {
  /** Times the relay accepted each Message-ID. */
  accepted: Map<string, number[]>;
  refusedById: Map<string, number>;
  /** "mail sent" log lines per Message-ID: the service logs one after recording a send. */
  sentLogged: Map<string, number>;
  /** Claims of each Message-ID (claimLog.ts). */
  claims: Map<string, Claim[]>;
  kills: Kill[];
  restarts: Outage[];
}

export function checkEveryEmail(
  outbox: QueuedMail[],
  evidence: MailEvidence,
): { resends: Resend[]; findings: string[] } {
  const resends: Resend[] = [];
  const findings: string[] = [];
  const queued = new Set(outbox.map((row) => row.messageId));
  for (const messageId of evidence.accepted.keys()) {
    if (!queued.has(messageId)) findings.push(`email ${messageId} was received but has no outbox row`);
  }
  for (const row of outbox) {
    const times = evidence.accepted.get(row.messageId) ?? [];
    const about = conversationOf(row);
    const what = `email ${row.messageId} (${row.customerReturn === null ? `order ${about}` : about})`;
    if (row.state === 'parked') {
      if ((row.lastError ?? '') === '') findings.push(`${what} was parked without a reason`);
      continue;
    }
    if (row.state !== 'sent') findings.push(`${what} ended ${row.state}, received ${times.length} times`);
    else if (times.length === 0) findings.push(`${what} is recorded as sent but the relay never received it`);
    if (times.length < 2) continue;

    const judged = judgeRepeats(
      `${what} received ${times.length} times`,
      times,
      evidence.claims.get(row.messageId) ?? [],
      evidence.kills,
      evidence.restarts,
    );
    findings.push(...judged.findings);
    resends.push({
      messageId: row.messageId,
      salesOrder: about,
      receipts: times.length,
      outboxAttempts: row.attempts,
      cause: [...new Set(judged.causes)].join(', ') || 'no crash of its holder',
    });
    // Cross-checks: the record that ends a send was written once, and each send had a claim of its own.
    const sends = times.length + (evidence.refusedById.get(row.messageId) ?? 0);
    if (row.attempts < sends)
      findings.push(`${what}: ${sends} sends but mail_outbox counts ${row.attempts} claims`);
    const logged = evidence.sentLogged.get(row.messageId) ?? 0;
    if (logged !== 1) findings.push(`${what}: the service recorded it as sent ${logged} times`);
  }
  return { resends, findings };
}
