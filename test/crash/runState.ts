import type { ExpectedCase } from './caseStatusTable.js';
import type { ExpectedPortal } from './checks.js';
import type { CrashReport } from './report.js';

/** What a crash run carries from phase to phase, and from the phases to the final checks. */
export interface RunState {
  /** S/4HANA's state of every order so far, as the portal must show it. */
  expected: Map<string, ExpectedPortal>;
  /** S/4HANA's state of every customer return so far, as its warranty case must show it. */
  expectedCases: Map<string, ExpectedCase>;
  /** Message-IDs of the emails judged so far: a later copy is a resend. */
  knownMail: Set<string>;
  /** When the suite's PostgreSQL was down. */
  restarts: Array<{ from: number; to: number }>;
  /** The last dead letter checked. */
  deadLetterId: number;
  findings: string[];
  report: CrashReport;
  /** When the fleet was told to stop: a reconciliation run failing from then on is not resumed. */
  stoppingAt: number;
}
