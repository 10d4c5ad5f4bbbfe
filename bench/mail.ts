// Mail throughput: emails queued in the outbox are drained by the real sender (createMailSender, the pooled
// SMTP transport) to the SMTP stand-in, which parses every message as a relay would read it. Two shapes of
// backlog: one email per order, and ten emails per order (each order's emails go out one after another).
// Besides emails/s it reports CPU per email, of this process (sender and stand-in) and of the database's
// sessions: on a shared machine the rate swings with the neighbours' load, the CPU cost much less.
// Creates its own database and drops it again; each run is bounded.
//
//   npx tsx bench/mail.ts        (BENCH_MAIL_EMAILS, BENCH_MAIL_RUNS to override)
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { startSmtpServer } from '../sandbox/smtpServer.js';
import { migrate } from '../src/db/migrate.js';
import { mailKinds } from '../src/families/index.js';
import { createMailSender } from '../src/notifications/mailSender.js';
import { smtpTransport } from '../src/notifications/mailTransport.js';
import { createLogger } from '../src/telemetry/logger.js';
import { createDatabase, type Database } from '../test/support/database.js';
import { cpuSeconds, ownCpuSeconds } from './processStats.js';
import { round, table } from './stats.js';

const EMAILS = Number(process.env.BENCH_MAIL_EMAILS ?? 2000);
const RUNS = Number(process.env.BENCH_MAIL_RUNS ?? 3);
const RUN_LIMIT_MS = 120_000;
const SHAPES = [
  { name: 'one email per order', perOrder: 1 },
  { name: 'ten emails per order', perOrder: 10 },
];

let database: Database | undefined;

async function main(): Promise<void> {
  database = await createDatabase('fon_bench_mail');
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  pool.on('error', () => {});
  const smtp = await startSmtpServer();
  try {
    await migrate(pool);
    const rows: Array<Array<string | number>> = [];
    for (const shape of SHAPES) {
      const runs: Drained[] = [];
      for (let run = 0; run < RUNS; run++) runs.push(await drain(pool, smtp, shape.perOrder));
      const median = (pick: (run: Drained) => number) =>
        runs.map(pick).sort((a, b) => a - b)[Math.floor(runs.length / 2)] ?? Number.NaN;
      rows.push([
        shape.name,
        EMAILS,
        ...runs.map((run) => round(run.perSecond, 0)),
        round(
          median((run) => run.perSecond),
          0,
        ),
        median((run) => run.ownCpuMs),
        median((run) => run.databaseCpuMs),
      ]);
    }
    console.log(
      `mail throughput, ${EMAILS} emails per run, ${cpus().length} CPUs, load ${loadavg()
        .map((n) => n.toFixed(1))
        .join(' ')}`,
    );
    console.log(
      table(
        [
          'backlog',
          'emails',
          ...Array.from({ length: RUNS }, (_, i) => `run ${i + 1}/s`),
          'median/s',
          'sender+relay CPU ms/email',
          'database CPU ms/email',
        ],
        rows,
      ),
    );
  } finally {
    await smtp.close();
    await pool.end();
    await database.drop();
  }
}

interface Drained {
  perSecond: number;
  ownCpuMs: number;
  databaseCpuMs: number;
}

/** Queues the backlog, starts a sender, and measures from its start to the last `sent` mark. */
async function drain(
  pool: pg.Pool,
  smtp: Awaited<ReturnType<typeof startSmtpServer>>,
  perOrder: number,
): Promise<Drained> {
  await pool.query('truncate mail_outbox');
  smtp.clear();
  await pool.query(
    `insert into mail_outbox (family, key, content, recipients, message_id)
     select 'salesOrder', (9000000 + i / $2::int)::text,
            jsonb_build_object('portalStatus', 'InProcess', 'requestedDeliveryDate',
              to_char(date '2026-12-01' + (i % 30), 'YYYY-MM-DD'), 'soldToParty', '17100001',
              'customerReference', 'PO-' || i),
            array['fleet-manager@fleet.example'], '<bench-' || i || '-' || gen_random_uuid() || '@fleet.example>'
     from generate_series(0, $1::int - 1) as i`,
    [EMAILS, perOrder],
  );
  await pool.query('analyze mail_outbox');
  const transport = smtpTransport(smtp.url);
  const sender = createMailSender({
    pool,
    transport,
    families: mailKinds({
      salesOrder: { portalOrderUrl: undefined },
      customerReturn: { warrantyReturnReasons: undefined },
    }),
    from: 'notifier@fleet.example',
    logger: createLogger('warn'),
    leaseSeconds: 15,
  });
  const backendsBefore = await backendCpu(pool);
  const ownBefore = ownCpuSeconds();
  const started = performance.now();
  sender.start();
  try {
    await smtp.waitForCount(EMAILS, RUN_LIMIT_MS);
    const deadline = Date.now() + RUN_LIMIT_MS;
    for (;;) {
      const { rows } = await pool.query<{ n: number }>(
        `select count(*)::int as "n" from mail_outbox where state <> 'sent'`,
      );
      if (rows[0]?.n === 0) break;
      if (Date.now() > deadline) throw new Error(`${rows[0]?.n} emails not marked sent in time`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const ownSeconds = ownCpuSeconds() - ownBefore;
    let databaseSeconds = 0;
    for (const [pid, cpu] of await backendCpu(pool)) databaseSeconds += cpu - (backendsBefore.get(pid) ?? 0);
    if (smtp.messages.length !== EMAILS) throw new Error(`${smtp.messages.length} emails for ${EMAILS}`);
    return {
      perSecond: EMAILS / seconds,
      ownCpuMs: round((ownSeconds * 1000) / EMAILS, 3),
      databaseCpuMs: round((databaseSeconds * 1000) / EMAILS, 3),
    };
  } finally {
    await sender.stop();
    transport.close();
  }
}

/** CPU seconds so far of every session on this database, by process id. */
async function backendCpu(pool: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ pid: number }>(
    `select pid from pg_stat_activity where datname = current_database()`,
  );
  const cpu = new Map<string, number>();
  for (const { pid } of rows) {
    try {
      cpu.set(String(pid), cpuSeconds(pid));
    } catch {
      // ended meanwhile
    }
  }
  return cpu;
}

main().catch(async (err) => {
  console.error(err);
  await database?.drop().catch(() => {});
  process.exitCode = 1;
});
