// `npm run demo`: the real service (loadConfig + startService, as in production) on a machine with nothing
// but Node.js. PostgreSQL is PGlite served over the wire protocol to the unchanged `pg` code, S/4HANA is the
// sandbox, mail is written as .eml files by the service's own MAIL_DIR transport, and this script plays
// Event Mesh, pushing demo/story.ts to the service's webhook. Around the events it asks for reconciliation runs:
// a baseline at go-live, for what S/4HANA held before, and a delta after an event is lost. It then reads back what
// the service did and fails loudly if that is not what the story expects.
//
// With --serve it stays up after the story (local mode) until Ctrl-C.
//
// Each run starts from scratch: the database and mail folders under DEMO_DIR (default .demo) are wiped at
// start and left in place at the end for a look. The production start never gets here: only this script
// opts in to PGlite, and nothing under src/ imports it.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import pino from 'pino';
import {
  type Answer,
  EXISTING_ORDERS,
  EXISTING_RETURNS,
  EXPECTED,
  INITIAL_ORDERS,
  lostChange,
  RECIPIENTS,
  STORY,
} from '../demo/story.js';
import { compare, printSummary, readSummary } from '../demo/summary.js';
import { type PortalServer, startPortalServer } from '../sandbox/portalServer.js';
import { S4_SOURCE } from '../sandbox/s4Events.js';
import { type S4Server, startS4Server } from '../sandbox/s4Server.js';
import { loadConfig } from '../src/config/loadConfig.js';
import type { RunView } from '../src/http/reconcileRoutes.js';
import { type Service, startService } from '../src/service/buildService.js';
import { createLogger } from '../src/telemetry/logger.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// `npm run demo -- --serve`: after the story, keep the embedded stack running for one's own events.
const SERVE = process.argv.includes('--serve');
const DEMO_DIR = resolve(ROOT, process.env.DEMO_DIR ?? '.demo');
const DATA_DIR = join(DEMO_DIR, 'pgdata');
const MAIL_DIR = join(DEMO_DIR, 'mail');
const LOG_FILE = join(DEMO_DIR, 'service.log');
/** A path as the reader would type it: relative below the working directory, absolute elsewhere. */
const show = (path: string) => {
  const below = relative(process.cwd(), path);
  return below === '' ? '.' : below.startsWith('..') ? path : below;
};

class DemoFailure extends Error {}

/** The order whose first push to the portal hangs: the demo shows it recovered. */
const PORTAL_TIMEOUT_ORDER = EXPECTED.portalTimeout;

// PGlite is one session under every connection: a statement one connection prepared by name exists for the
// others too, and preparing it again fails. The service runs in this process, so each of its connections gets
// names of its own here.
const prepare = pg.Client.prototype.query;
const connections = new WeakMap<object, number>();
let connected = 0;
pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
  const query = config as { name?: unknown; submit?: unknown } | null;
  if (
    query !== null &&
    typeof query === 'object' &&
    query.submit === undefined &&
    typeof query.name === 'string'
  ) {
    if (!connections.has(this)) connections.set(this, ++connected);
    config = { ...query, name: `${query.name}-${connections.get(this)}` };
  }
  return Reflect.apply(prepare, this, [config, ...rest]);
} as typeof prepare;

const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
let db: PGlite | undefined;
let socket: PGLiteSocketServer | undefined;
let s4: S4Server | undefined;
let portal: PortalServer | undefined;
let service: Service | undefined;

try {
  console.log('Fleet order notifier demo: the real service, embedded PostgreSQL (PGlite), S/4HANA sandbox');
  // Only the folders the demo writes, never DEMO_DIR itself: it may name a directory holding other things.
  await Promise.all([DATA_DIR, MAIL_DIR, LOG_FILE].map((path) => rm(path, { recursive: true, force: true })));
  await mkdir(DEMO_DIR, { recursive: true });

  db = await PGlite.create(DATA_DIR);
  // PGlite is one connection underneath; the socket server queues every client's queries onto it, a client's
  // open transaction first. The pool keeps two connections (DATABASE_POOL_SIZE=2: a reconciliation run holds one
  // for its lock, its pages use the other) and /health one of its own; a fourth slot only lets one of them
  // reconnect while its old socket is still closing.
  socket = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 });
  await socket.start();

  s4 = await startS4Server();
  // What S/4HANA holds at go-live; the story's orders come after the baseline.
  for (const order of EXISTING_ORDERS) s4.setOrder(order);
  for (const customerReturn of EXISTING_RETURNS) s4.returns.setReturn(customerReturn);
  // The fleet portal's API: its first answer to the tractor units' order never comes, so the push times out
  // and goes again with the same Idempotency-Key.
  portal = await startPortalServer();
  portal.failNext('hang', 1, PORTAL_TIMEOUT_ORDER);
  // The SAP Cloud SDK reads destinations from this variable itself; the service only names the destination.
  process.env.destinations = JSON.stringify([
    { name: 'DEMO_S4', url: s4.url },
    { name: 'DEMO_PORTAL', url: portal.url },
  ]);

  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: `postgres://postgres@${socket.getServerConn()}/postgres`,
    DATABASE_POOL_SIZE: '2',
    INGEST: 'webhook',
    AUTH: 'none',
    S4_DESTINATION: 'DEMO_S4',
    // The sandbox speaks both sales-order APIs: `S4_API=v4 npm run demo` tells the story over OData V4.
    S4_API: process.env.S4_API ?? 'v2',
    // Reconciliation against the sandbox, the system the story's events come from; its runs start when the demo
    // asks (POST /api/reconcile/runs), not on a timer.
    S4_SOURCE,
    RECONCILE_INTERVAL: 'off',
    MAIL_DIR,
    MAIL_FROM: 'fleet-order-notifier@demo.example',
    MAIL_TO: 'fleet-manager@demo.example',
    PORTAL_ORDER_URL: 'https://fleet-portal.demo.example/orders/{salesOrder}',
    // Every order's state is PUT to the portal's API too; a hung answer counts as a timeout after a second.
    PORTAL_DESTINATION: 'DEMO_PORTAL',
    PORTAL_TIMEOUT_MS: '1000',
    // The service's JSON log goes to a file, so this console shows the story; it is there to read. The tests run
    // it at debug, for the log guard to read every line.
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  });
  const logger = createLogger(config.logLevel, pino.destination({ dest: LOG_FILE, sync: true, mkdir: true }));
  service = await startService(config, logger, { host: '127.0.0.1', mailPollMs: 200 });
  console.log(
    `  service at ${service.url} after ${seconds()} s, reading S/4HANA over OData ${config.s4.version}`,
  );
  for (const { soldToParty, recipients, locale } of RECIPIENTS) {
    await service.pool.query(
      'insert into mail_recipient (sold_to_party, recipients, locale) values ($1, $2, $3)',
      [soldToParty, recipients, locale],
    );
  }
  console.log(`  database ${show(DATA_DIR)}, mail ${show(MAIL_DIR)}, service log ${show(LOG_FILE)}\n`);

  const webhook = `${service.url}/events`;
  const handshake = await fetch(webhook, {
    method: 'OPTIONS',
    headers: { 'webhook-request-origin': 'eventmesh.example.com' },
  });
  if (handshake.status === 404) {
    throw new DemoFailure(
      'the service has no webhook at /events: INGEST=webhook is not wired in src/service/buildService.ts',
    );
  }
  const allowed = handshake.headers.get('webhook-allowed-origin');
  console.log(
    `Event Mesh handshake: OPTIONS /events → ${handshake.status}, WebHook-Allowed-Origin: ${allowed}`,
  );
  if (allowed !== 'eventmesh.example.com') throw new DemoFailure('the webhook did not grant the handshake');

  const problems: string[] = [];
  console.log('Go-live: a baseline reads what S/4HANA already holds, for the portal and without email:');
  await reconcile(service.url, 'baseline');
  const mailed = await service.pool.query('select from mail_outbox');
  if (mailed.rowCount !== 0) problems.push(`the baseline queued ${mailed.rowCount} emails, expected none`);
  for (const order of INITIAL_ORDERS) s4.setOrder(order);

  console.log('\nEvent Mesh pushes the events:');
  let retryAfterSeconds = 0;
  for (const [index, step] of STORY.entries()) {
    step.s4?.(s4);
    if (step.honourRetryAfter) await sleep(retryAfterSeconds * 1000);
    const response = await fetch(webhook, {
      method: 'POST',
      headers: step.delivery.headers,
      body: step.delivery.body,
    });
    const { answer, text } = await readAnswer(response);
    retryAfterSeconds = Number(response.headers.get('retry-after') ?? 0);
    step.s4After?.(s4);
    console.log(`  ${String(index + 1).padStart(2)}  ${step.say.padEnd(72)} → ${text}`);
    if (answer !== step.answer)
      problems.push(`step ${index + 1} (${step.say}): expected ${step.answer}, got ${text}`);
  }

  const lost = lostChange(new Date());
  s4.setOrder(lost);
  console.log(
    `\nAn event is lost: S/4HANA moves ${lost.salesOrder} to in process and publishes nothing. A delta run repairs it:`,
  );
  await reconcile(service.url, 'delta');

  // Mail goes out after commit; wait until the outbox has nothing left to send.
  const pool = service.pool;
  const deadline = Date.now() + 15_000;
  while ((await pool.query(`select 1 from mail_outbox where state = 'pending' limit 1`)).rowCount !== 0) {
    if (Date.now() > deadline) throw new DemoFailure('emails still pending in the outbox after 15 s');
    await sleep(100);
  }

  // Pushes to the portal's API, too (the timed-out one waits its backoff first).
  while ((await pool.query(`select 1 from portal_push where state = 'pending' limit 1`)).rowCount !== 0) {
    if (Date.now() > deadline + 15_000) throw new DemoFailure('portal pushes still pending after 30 s');
    await sleep(100);
  }

  const summary = await readSummary(pool, service.url, MAIL_DIR, portal);
  printSummary(summary, show);
  problems.push(...compare(summary, EXPECTED));
  await writeFile(join(DEMO_DIR, 'summary.json'), `${JSON.stringify({ ...summary, problems }, null, 2)}\n`);
  if (problems.length > 0) {
    throw new DemoFailure(`the service's results differ from the story:\n  - ${problems.join('\n  - ')}`);
  }
  if (SERVE) {
    console.log(`\nDemo OK in ${seconds()} s. Summary: ${show(join(DEMO_DIR, 'summary.json'))}`);
    printLocalMode(service.url, s4.url);
    // Stays up until Ctrl-C (or SIGTERM), then stops as a deployed instance does.
    const stop = () => {
      console.log('\nstopping');
      void stopAll().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } else {
    await stopAll();
    console.log(`\nDemo OK in ${seconds()} s. Summary: ${show(join(DEMO_DIR, 'summary.json'))}`);
    process.exit(0);
  }
} catch (err) {
  console.error(
    `\nDEMO FAILED after ${seconds()} s: ${err instanceof DemoFailure ? err.message : String(err)}`,
  );
  if (!(err instanceof DemoFailure) && err instanceof Error && err.stack) console.error(err.stack);
  const log = await readFile(LOG_FILE, 'utf8').catch(() => '');
  if (log !== '')
    console.error(`\nLast lines of ${show(LOG_FILE)}:\n${log.trimEnd().split('\n').slice(-10).join('\n')}`);
  await stopAll().catch(() => {});
  process.exit(1);
}

/**
 * Runs each family in `mode` through the admin API, one after the other (a run holds one of the pool's two
 * connections for its lock), and prints each once it has ended.
 */
async function reconcile(serviceUrl: string, mode: 'baseline' | 'delta'): Promise<void> {
  const url = `${serviceUrl}/api/reconcile/runs`;
  for (const family of ['salesOrder', 'customerReturn']) {
    const started = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ family, mode }),
    });
    if (started.status !== 202)
      throw new DemoFailure(`POST /api/reconcile/runs answered ${started.status}: ${await started.text()}`);
    const {
      runs: [id],
    } = (await started.json()) as { runs: string[] };
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { runs } = (await (await fetch(url)).json()) as { runs: RunView[] };
      const run = runs.find((candidate) => candidate.id === id);
      if (run !== undefined && run.status !== 'running') {
        const what = `${run.family} ${run.mode}: run ${run.id} ${run.status}`;
        console.log(
          `  ${what.padEnd(36)} ${run.rows} read, ${run.repairs} repaired, ${run.s4Requests} S/4HANA requests`,
        );
        break;
      }
      if (Date.now() > deadline) throw new DemoFailure(`reconciliation run ${id} still running after 15 s`);
      await sleep(100);
    }
  }
}

/** What someone trying the service with their own events needs: where to post, look and change things. */
function printLocalMode(serviceUrl: string, s4Url: string): void {
  const order = INITIAL_ORDERS[0]?.salesOrder ?? '1000473';
  console.log(`
Local mode: the service keeps running until Ctrl-C.
  console        ${serviceUrl}/console/  (operators' console, no login locally)
  webhook        POST ${serviceUrl}/events  (structured or binary CloudEvents; no token locally)
  admin API      ${serviceUrl}/api/summary, ${serviceUrl}/api/orders/${order}  (no authentication locally)
  health         ${serviceUrl}/health, metrics ${serviceUrl}/metrics
  mail folder    ${show(MAIL_DIR)}  (one .eml file per email)
  service log    ${show(LOG_FILE)}

Change an order in the S/4HANA sandbox (any SalesOrderState field of sandbox/s4Server.ts; GET shows it):
  curl -X PATCH ${s4Url}/orders/${order} -H 'content-type: application/json' \\
       -d '{"requestedDeliveryDate":"2027-03-01","overallDeliveryStatus":"B"}'
Then announce the change as S/4HANA would (each event needs a new ce-id):
  curl -i -X POST ${serviceUrl}/events -H 'content-type: application/json' \\
       -H 'ce-specversion: 1.0' -H 'ce-type: sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1' \\
       -H 'ce-source: /default/sap.s4.beh/244572008' -H "ce-id: $(date +%s%N)" \\
       -d '{"SalesOrder":"${order}"}'`);
}

async function stopAll(): Promise<void> {
  await service?.stop();
  await socket?.stop();
  await db?.close();
  await s4?.close();
  await portal?.close();
}

async function readAnswer(response: Response): Promise<{ answer: Answer | string; text: string }> {
  const body = (await response.json().catch(() => ({}))) as {
    status?: string;
    result?: string;
    reason?: string;
  };
  if (response.status === 200 && body.status === 'processed') {
    return { answer: `processed:${body.result}`, text: `200 processed (${body.result})` };
  }
  if (response.status === 200 && body.status === 'duplicate')
    return { answer: 'duplicate', text: '200 duplicate' };
  if (response.status === 503) {
    const after = response.headers.get('retry-after');
    return { answer: 'retry-later', text: `503 retry later (Retry-After: ${after} s)` };
  }
  if (response.status === 202 && body.status === 'dead-lettered') {
    return { answer: 'dead-lettered', text: `202 dead-lettered: ${body.reason}` };
  }
  return { answer: `HTTP ${response.status}`, text: `${response.status} ${JSON.stringify(body)}` };
}
