// What the service made of the demo, read back from where it keeps it: the database (processed events, dead
// letters, portal status, mail outbox), its admin API (reconciliation runs), its own /metrics counters
// (duplicates and releases write nothing to the database) and the .eml files its mail transport wrote. Nothing
// here trusts counters kept by the demo.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import type { Pool } from 'pg';
import type { PortalServer } from '../sandbox/portalServer.js';
import type { EXPECTED } from './story.js';

/** One .eml file: an order's email (its portal status and date) or a warranty case's (its case status). */
export interface Email {
  file: string;
  salesOrder: string;
  customerReturn: string | null;
  status: string;
  date: string | null;
  subject: string;
}

export interface Summary {
  /** Deliveries the webhook handled, by outcome, from the service's fon_events_total counter. */
  counted: Record<string, number>;
  /** processed_event rows of events (not of reconciliation) by outcome. */
  processed: Record<string, number>;
  rejected: Array<{ id: string; reason: string }>;
  portal: Array<{
    salesOrder: string;
    status: string;
    date: string | null;
    customerReference: string | null;
    /** The outcome of the order's latest processed event: not_found means S/4HANA no longer has it. */
    lastEvent: string | null;
  }>;
  /** What the fleet portal's API holds per order, and how its PUTs were answered (0: no answer, timed out). */
  portalApi: Array<{
    salesOrder: string;
    status: string;
    date: string | null;
    answers: number[];
    keys: number;
  }>;
  /** Warranty cases (warranty_case) and what the portal's API holds of each. */
  cases: Array<{
    customerReturn: string;
    status: string;
    salesOrder: string | null;
    customerReference: string | null;
  }>;
  casesApi: Array<{ customerReturn: string; status: string; answers: number[] }>;
  emails: Email[];
  outbox: Record<string, number>;
  /** Reconciliation runs (GET /api/reconcile/runs), oldest first. */
  reconcile: Array<{
    id: string;
    family: string;
    mode: string;
    status: string;
    rows: number;
    repairs: number;
  }>;
  problems: string[];
}

export async function readSummary(
  pool: Pool,
  serviceUrl: string,
  mailDir: string,
  portalServer: PortalServer,
): Promise<Summary> {
  const problems: string[] = [];
  const counted = await webhookCounters(serviceUrl);
  const processed = await countBy(
    pool,
    'select outcome as "key", count(*)::int as "n" from processed_event where reconcile_run is null group by 1',
  );
  const outbox = await countBy(
    pool,
    'select state as "key", count(*)::int as "n" from mail_outbox group by 1',
  );
  const { rows: rejected } = await pool.query<{ id: string; reason: string }>(
    `select id::text as "id", reason from dead_letter where channel = 'webhook' order by id`,
  );
  const { rows: portal } = await pool.query<Summary['portal'][number]>(
    `select p.sales_order as "salesOrder", p.portal_status as "status",
            to_char(p.requested_delivery_date, 'YYYY-MM-DD') as "date",
            p.customer_reference as "customerReference",
            (select e.outcome from processed_event e where e.family = 'salesOrder' and e.key = p.sales_order
             order by e.processed_at desc limit 1) as "lastEvent"
     from portal_order_status p order by p.sales_order`,
  );
  const { rows: queued } = await pool.query<{
    messageId: string;
    salesOrder: string | null;
    customerReturn: string | null;
  }>(
    `select message_id as "messageId", case family when 'salesOrder' then key end as "salesOrder",
            case family when 'customerReturn' then key end as "customerReturn"
     from mail_outbox order by id`,
  );
  const { rows: cases } = await pool.query<Summary['cases'][number]>(
    `select customer_return as "customerReturn", case_status as "status", sales_order as "salesOrder",
            customer_reference as "customerReference"
     from warranty_case where opened order by customer_return`,
  );

  const files = new Map<string, Email>();
  for (const name of (await readdir(mailDir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml'))) {
    const file = join(mailDir, name);
    const mail = await simpleParser(await readFile(file));
    const header = (key: string) => {
      const value = mail.headers.get(key);
      return typeof value === 'string' ? value : null;
    };
    const customerReturn = header('x-customer-return');
    files.set(mail.messageId ?? name, {
      file,
      salesOrder: header('x-sales-order') ?? '?',
      customerReturn,
      status: (customerReturn === null ? header('x-portal-status') : header('x-case-status')) ?? '?',
      date: header('x-requested-delivery-date'),
      subject: mail.subject ?? '',
    });
  }
  // In the order the changes were committed (the outbox's), each with the file the transport wrote for it.
  const emails: Summary['emails'] = [];
  for (const row of queued) {
    const mail = files.get(row.messageId);
    const about = row.customerReturn === null ? `order ${row.salesOrder}` : `return ${row.customerReturn}`;
    if (mail === undefined) problems.push(`no .eml file for the email ${row.messageId} (${about})`);
    else if (mail.customerReturn !== row.customerReturn)
      problems.push(
        `${mail.file} has X-Customer-Return ${mail.customerReturn}, expected ${row.customerReturn}`,
      );
    else if (row.customerReturn === null && mail.salesOrder !== row.salesOrder)
      problems.push(`${mail.file} has X-Sales-Order ${mail.salesOrder}, expected ${row.salesOrder}`);
    else emails.push(mail);
    files.delete(row.messageId);
  }
  for (const mail of files.values()) problems.push(`${mail.file} is not in the mail outbox`);

  const portalApi = portal.map(({ salesOrder }) => {
    const held = portalServer.state(salesOrder);
    const puts = portalServer.requests(salesOrder);
    return {
      salesOrder,
      status: held?.portalStatus ?? '-',
      date: held?.requestedDeliveryDate ?? null,
      answers: puts.map((put) => put.status),
      keys: new Set(puts.map((put) => put.idempotencyKey)).size,
    };
  });
  for (const [i, row] of portal.entries()) {
    const api = portalApi[i];
    if (api?.status !== row.status || api.date !== row.date)
      problems.push(
        `the portal API holds ${api?.status}/${api?.date} for ${row.salesOrder}, the table ${row.status}/${row.date}`,
      );
  }

  const handled = sum(processed);
  const countedProcessed = ['applied', 'stale', 'not_found', 'ignored'].reduce(
    (n, k) => n + (counted[k] ?? 0),
    0,
  );
  if (countedProcessed !== handled) {
    problems.push(`the service counted ${countedProcessed} processed events, the database holds ${handled}`);
  }
  if ((counted.rejected ?? 0) !== rejected.length) {
    problems.push(
      `the service counted ${counted.rejected ?? 0} rejected events, dead_letter holds ${rejected.length}`,
    );
  }
  const casesApi = cases.map(({ customerReturn }) => ({
    customerReturn,
    status: portalServer.caseState(customerReturn)?.caseStatus ?? '-',
    answers: portalServer.caseRequests(customerReturn).map((put) => put.status),
  }));
  for (const [i, row] of cases.entries()) {
    if (casesApi[i]?.status !== row.status)
      problems.push(
        `the portal API holds case ${row.customerReturn} as ${casesApi[i]?.status}, not ${row.status}`,
      );
  }
  const { runs } = (await (await fetch(`${serviceUrl}/api/reconcile/runs`)).json()) as {
    runs: Summary['reconcile'];
  };
  const reconcile = runs
    .reverse()
    .map(({ id, family, mode, status, rows, repairs }) => ({ id, family, mode, status, rows, repairs }));
  return {
    counted,
    processed,
    rejected,
    portal,
    portalApi,
    cases,
    casesApi,
    emails,
    outbox,
    reconcile,
    problems,
  };
}

/** Differences between what the service did and what the story expects; empty when they agree. */
export function compare(summary: Summary, expected: typeof EXPECTED): string[] {
  const problems = [...summary.problems];
  const check = (what: string, actual: unknown, wanted: unknown) => {
    if (canonical(actual) !== canonical(wanted)) {
      problems.push(`${what}: expected ${canonical(wanted)}, got ${canonical(actual)}`);
    }
  };
  check('events received', sum(summary.counted), expected.received);
  check('events processed', summary.processed, expected.processed);
  check('duplicates skipped', summary.counted.duplicate ?? 0, expected.duplicates);
  check('deliveries released for retry', summary.counted.released ?? 0, expected.released);
  check('events rejected', summary.rejected.length, expected.rejected);
  check(
    'portal status',
    Object.fromEntries(
      summary.portal.map((row) => [
        row.salesOrder,
        { status: row.status, date: row.date, lastEvent: row.lastEvent },
      ]),
    ),
    expected.portal,
  );
  check(
    'warranty cases',
    Object.fromEntries(
      summary.cases.map((row) => [row.customerReturn, { status: row.status, salesOrder: row.salesOrder }]),
    ),
    expected.cases,
  );
  check(
    'emails',
    summary.emails.map((mail) =>
      mail.customerReturn === null
        ? `${mail.salesOrder} ${mail.status} ${mail.date ?? 'no date'}`
        : `return ${mail.customerReturn} ${mail.status}`,
    ),
    [...expected.emails, ...expected.repairedEmails],
  );
  check('mail outbox', summary.outbox, { sent: expected.emails.length + expected.repairedEmails.length });
  check('reconciliation runs', summary.reconcile.map(runLine), expected.reconcile);
  // How many PUTs an order takes depends on timing (a newer state replaces one not yet sent); what must hold:
  // one timeout, on the order the story picked, and every order's last PUT accepted.
  check(
    'portal API timeouts',
    summary.portalApi.filter((row) => row.answers.includes(0)).map((row) => row.salesOrder),
    [expected.portalTimeout],
  );
  check(
    'orders whose last PUT the portal API did not accept',
    summary.portalApi.filter((row) => row.answers.at(-1) !== 200).map((row) => row.salesOrder),
    [],
  );
  return problems;
}

export function printSummary(summary: Summary, show: (path: string) => string): void {
  const { counted, processed } = summary;
  const detail = ['applied', 'stale', 'not_found', 'ignored']
    .filter((outcome) => processed[outcome] !== undefined)
    .map((outcome) => `${outcome} ${processed[outcome]}`)
    .join(', ');
  console.log('\nEvents (service metrics and database)');
  console.log(`  received             ${pad(sum(counted))}`);
  console.log(`  processed            ${pad(sum(processed))}  (${detail})`);
  console.log(`  duplicates skipped   ${pad(counted.duplicate ?? 0)}`);
  console.log(`  released for retry   ${pad(counted.released ?? 0)}  (answered 503, applied on redelivery)`);
  console.log(`  rejected             ${pad(summary.rejected.length)}  (kept in dead_letter)`);
  for (const letter of summary.rejected) console.log(`    #${letter.id}: ${letter.reason}`);

  console.log('\nPortal status (portal_order_status)');
  for (const row of summary.portal) {
    // The portal keeps the last state it saw of an order deleted in S/4HANA; its latest event tells.
    const note = row.lastEvent === 'not_found' ? '  (no longer in S/4HANA)' : '';
    const date = (row.date ?? '-').padEnd(11);
    console.log(
      `  ${row.salesOrder}  ${row.status.padEnd(19)} ${date} ${row.customerReference ?? ''}${note}`,
    );
  }

  console.log('\nFleet portal API (PUT /orders/<salesOrder>, the stand-in in sandbox/portalServer.ts)');
  for (const row of summary.portalApi) {
    const answers = row.answers.map((status) => (status === 0 ? 'timeout' : String(status))).join(', ');
    const recovered = row.answers.includes(0) ? '  (a timeout, recovered: the push went again)' : '';
    const pushes = `${row.keys} ${row.keys === 1 ? 'push' : 'pushes'}`;
    const date = (row.date ?? '-').padEnd(11);
    console.log(
      `  ${row.salesOrder}  ${row.status.padEnd(19)} ${date} ${pushes}, answers: ${answers}${recovered}`,
    );
  }

  console.log('\nWarranty cases (warranty_case; the portal API beside it)');
  for (const [i, row] of summary.cases.entries()) {
    const api = summary.casesApi[i];
    const answers = api?.answers.join(', ') ?? '-';
    console.log(
      `  ${row.customerReturn}  ${row.status.padEnd(10)} order ${row.salesOrder ?? '-'}  ${row.customerReference ?? ''}`,
    );
    console.log(`      portal API: ${api?.status ?? '-'}, answers: ${answers}`);
  }

  console.log('\nReconciliation runs (GET /api/reconcile/runs)');
  for (const run of summary.reconcile) console.log(`  run ${run.id.padEnd(3)} ${runLine(run)}`);

  console.log(`\nEmails (${summary.emails.length}, one per real change)`);
  // The subject line, as the fleet manager's inbox lists it, and the file with the whole email.
  for (const mail of summary.emails) console.log(`  ${mail.subject}\n      ${show(mail.file)}`);
}

/** A run as the story expects it: `salesOrder delta done: 1 rows, 1 repairs`. */
function runLine(run: Summary['reconcile'][number]): string {
  return `${run.family} ${run.mode} ${run.status}: ${run.rows} rows, ${run.repairs} repairs`;
}

async function webhookCounters(serviceUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const counted: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^fon_events_total\{([^}]*)\} (\S+)$/.exec(line);
    if (match === null) continue;
    const labels = Object.fromEntries(
      [...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (labels.channel !== 'webhook' || labels.outcome === undefined) continue;
    counted[labels.outcome] = (counted[labels.outcome] ?? 0) + Number(match[2]);
  }
  return counted;
}

async function countBy(pool: Pool, sql: string): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ key: string; n: number }>(sql);
  return Object.fromEntries(rows.map((row) => [row.key, row.n]));
}

/** JSON with object keys sorted, so that the order rows came back in does not matter. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

function pad(n: number): string {
  return String(n).padStart(3);
}
