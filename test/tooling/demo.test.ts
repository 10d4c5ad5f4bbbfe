// `npm run demo` as a user runs it: a child process on embedded defaults (PGlite, the S/4HANA sandbox, mail
// as .eml files), in a folder of its own. Checked from the outside: exit code, the printed summary, the summary
// file and the emails on disk, parsed independently of the demo.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_LOG_ENV, guardDemoLog } from '../support/demoLog.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN_TIMEOUT_MS = 120_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the demo in `demoDir`; its service's log passes the log guard. */
async function runDemo(demoDir: string, env: Record<string, string> = {}): Promise<Run> {
  const run = await new Promise<Run>((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'scripts/demo.ts'], {
      cwd: ROOT,
      env: { ...process.env, DEMO_DIR: demoDir, ...DEMO_LOG_ENV, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  await guardDemoLog(demoDir);
  return run;
}

async function emails(demoDir: string) {
  const dir = join(demoDir, 'mail');
  const files = (await readdir(dir)).filter((name) => name.endsWith('.eml'));
  return Promise.all(
    files.map(async (name) => {
      const mail = await simpleParser(await readFile(join(dir, name)));
      const customerReturn = mail.headers.get('x-customer-return');
      return {
        name,
        customerReturn,
        salesOrder: mail.headers.get('x-sales-order'),
        status: mail.headers.get(customerReturn === undefined ? 'x-portal-status' : 'x-case-status'),
        date: mail.headers.get('x-requested-delivery-date'),
        messageId: mail.messageId,
        subject: mail.subject,
      };
    }),
  );
}

/** The count printed on a summary line such as `  received              16`. */
function printed(stdout: string, label: string): number | undefined {
  const match = new RegExp(`^ {2}${label} +(\\d+)`, 'm').exec(stdout);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** An email as the lists below name it: an order's with its status and date, a case's with its status. */
function described(mail: Awaited<ReturnType<typeof emails>>[number]): string {
  return mail.customerReturn === undefined
    ? `${mail.salesOrder} ${mail.status} ${mail.date}`
    : `return ${mail.customerReturn} ${mail.status}`;
}

const EMAILS = [
  '1000470 InProcess 2026-12-10',
  '1000473 Open 2026-12-15',
  '1000473 Open 2027-01-12',
  '1000474 Delivered 2026-12-01',
  '1000474 Open 2026-12-01',
  '1000474 PartiallyDelivered 2026-12-01',
  '1000475 Delivered 2027-01-20',
  '1000475 InProcess 2027-01-20',
  '1000476 Open 2026-12-20',
  '1000477 DeliveryBlocked 2027-02-01',
  'return 60000001 Completed',
  'return 60000001 InProcess',
  'return 60000001 Open',
];

/** Each order and the portal status the story ends it in. */
const FINAL_STATUSES = [
  ['1000473', 'Open'],
  ['1000474', 'Delivered'],
  ['1000475', 'Delivered'],
  ['1000476', 'Open'],
  ['1000477', 'DeliveryBlocked'],
];

describe('npm run demo', () => {
  let demoDir: string;
  let first: Run;

  beforeAll(async () => {
    demoDir = await mkdtemp(join(tmpdir(), 'fon-demo-'));
    first = await runDemo(demoDir);
  }, RUN_TIMEOUT_MS);
  afterAll(async () => {
    await rm(demoDir, { recursive: true, force: true });
  });

  it('exits 0 and prints the counts the story produces', () => {
    expect(first.stderr).not.toContain('DEMO FAILED');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Demo OK');
    expect(printed(first.stdout, 'received')).toBe(22);
    expect(printed(first.stdout, 'processed')).toBe(17);
    expect(printed(first.stdout, 'duplicates skipped')).toBe(2);
    expect(printed(first.stdout, 'released for retry')).toBe(2);
    expect(printed(first.stdout, 'rejected')).toBe(1);
  });

  it('prints each order with the portal status it ends in', () => {
    for (const [salesOrder, status] of FINAL_STATUSES) {
      expect(first.stdout).toMatch(new RegExp(`^ {2}${salesOrder} +${status} `, 'm'));
    }
    expect(first.stdout).toMatch(/^ {2}1000476 .*\(no longer in S\/4HANA\)$/m);
  });

  it("prints the portal API's final state of each order beside the portal table, one timeout recovered", () => {
    const section = first.stdout.split('Fleet portal API')[1]?.split('\nWarranty cases')[0] ?? '';
    for (const [salesOrder, status] of FINAL_STATUSES) {
      expect(section).toMatch(new RegExp(`^ {2}${salesOrder} +${status} .*answers: .*200(  \\(|$)`, 'm'));
    }
    expect(section).toMatch(
      /^ {2}1000475 .*answers: timeout, .*200 {2}\(a timeout, recovered: the push went again\)$/m,
    );
    expect(section.match(/timeout/g)?.length).toBe(2);
  });

  it('tells the warranty story: the case ends completed, its three emails in one conversation, in order', async () => {
    const section = first.stdout.split('\nWarranty cases')[1]?.split('\nEmails')[0] ?? '';
    expect(section).toMatch(/^ {2}60000001 +Completed +order 1000473 /m);
    expect(section).toMatch(/^ {6}portal API: Completed, answers: .*200$/m);
    const cases = first.stdout.split('\n').filter((line) => line.startsWith('  Customer return 60000001'));
    expect(cases).toEqual([
      '  Customer return 60000001 for sales order 1000473: new warranty case, open',
      '  Customer return 60000001 for sales order 1000473: in process',
      '  Customer return 60000001 for sales order 1000473: completed',
    ]);
    expect(first.stdout).toMatch(/"return in process" again +→ 200 duplicate$/m);
    expect(first.stdout).toMatch(
      /item event comes again \(no new status, no email\) +→ 200 processed \(applied\)$/m,
    );
  });

  it('writes one parseable .eml file per real change, each with its X-Sales-Order, and lists it', async () => {
    const mails = await emails(demoDir);
    expect(mails.map(described).sort()).toEqual(EMAILS);
    for (const mail of mails) {
      expect(mail.messageId).toMatch(/^<.+@demo\.example>$/);
      expect(first.stdout).toContain(mail.name);
    }
  });

  it("prints each email's subject line, in its recipients' language", async () => {
    const mails = await emails(demoDir);
    for (const mail of mails) expect(first.stdout).toContain(`\n  ${mail.subject}\n`);
    expect(first.stdout).toContain(
      '\n  Sales order 1000473 (NFL-2026-0142): delivery date moved to 12 Jan 2027\n',
    );
    expect(first.stdout).toContain('\n  Kundenauftrag 1000475 (AGRO-TRK-55): geliefert\n');
  });

  it('leaves a summary file that agrees with the service database', async () => {
    const summary = JSON.parse(await readFile(join(demoDir, 'summary.json'), 'utf8'));
    expect(summary.problems).toEqual([]);
    expect(summary.processed).toEqual({ applied: 15, stale: 1, not_found: 1 });
    expect(summary.rejected).toEqual([{ id: '1', reason: expect.stringMatching(/^body is not valid JSON/) }]);
    expect(summary.outbox).toEqual({ sent: 13 });
    expect(summary.cases).toEqual([
      // Found by the baseline at go-live.
      {
        customerReturn: '60000000',
        status: 'Open',
        salesOrder: '1000470',
        customerReference: 'NFL-RMA-0003 1 minibus, heating',
      },
      {
        customerReturn: '60000001',
        status: 'Completed',
        salesOrder: '1000473',
        customerReference: 'NFL-RMA-0007 2 vans, sliding door',
      },
    ]);
  });

  it('puts what S/4HANA held at go-live on the portal without email, and repairs a lost event with one email', async () => {
    const summary = JSON.parse(await readFile(join(demoDir, 'summary.json'), 'utf8'));
    expect(
      summary.reconcile.map((run: Record<string, unknown>) => [
        run.family,
        run.mode,
        run.status,
        run.rows,
        run.repairs,
      ]),
    ).toEqual([
      ['salesOrder', 'baseline', 'done', 2, 0],
      ['customerReturn', 'baseline', 'done', 1, 0],
      ['salesOrder', 'delta', 'done', 1, 1],
      ['customerReturn', 'delta', 'done', 0, 0],
    ]);
    // The orders and the case S/4HANA held before the service started, on the portal.
    expect(first.stdout).toMatch(/^ {2}1000470 +InProcess +2026-12-10 .*answers: .*200$/m);
    expect(first.stdout).toMatch(/^ {2}1000471 +Open +2026-12-05 .*answers: 200$/m);
    expect(first.stdout).toMatch(/^ {2}60000000 +Open +order 1000470 /m);
    // No email for what the baseline found; exactly one, the last, for the change whose event was lost.
    const mails = await emails(demoDir);
    expect(
      mails.filter((mail) => ['1000470', '1000471'].includes(String(mail.salesOrder))).map(described),
    ).toEqual(['1000470 InProcess 2026-12-10']);
    expect(mails.filter((mail) => mail.customerReturn === '60000000')).toEqual([]);
    expect(summary.emails.at(-1).subject).toBe('Sales order 1000470 (NFL-2026-0098): in process');
    expect(first.stdout).toMatch(
      /^ {2}salesOrder delta: run 3 done +1 read, 1 repaired, \d+ S\/4HANA requests$/m,
    );
  });

  it(
    'runs again in the same folder from a clean start with the same result',
    async () => {
      const second = await runDemo(demoDir);
      expect(second.code).toBe(0);
      expect(printed(second.stdout, 'received')).toBe(22);
      expect(printed(second.stdout, 'processed')).toBe(17);
      expect(printed(second.stdout, 'duplicates skipped')).toBe(2);
      const mails = await emails(demoDir);
      expect(mails).toHaveLength(EMAILS.length);
      expect(mails.some((mail) => !second.stdout.includes(mail.name))).toBe(false);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'tells the same story over the OData V4 API with S4_API=v4',
    async () => {
      const v4Dir = await mkdtemp(join(tmpdir(), 'fon-demo-v4-'));
      try {
        const run = await runDemo(v4Dir, { S4_API: 'v4' });
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toContain('reading S/4HANA over OData v4');
        expect(printed(run.stdout, 'processed')).toBe(17);
        const mails = await emails(v4Dir);
        expect(mails.map(described).sort()).toEqual(EMAILS);
        expect(JSON.parse(await readFile(join(v4Dir, 'summary.json'), 'utf8')).problems).toEqual([]);
      } finally {
        await rm(v4Dir, { recursive: true, force: true });
      }
    },
    RUN_TIMEOUT_MS,
  );
});
