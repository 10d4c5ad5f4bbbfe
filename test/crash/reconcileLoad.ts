// Reconciliation in a crash run: S/4HANA's clock for the stamps it writes, the documents it holds before the
// fleet starts (the baseline's), and the instance running a reconciliation run, for a kill aimed at it.
import { readdir, readFile, readlink } from 'node:fs/promises';
import type pg from 'pg';
import type { S4Server } from '../../sandbox/s4Server.js';
import { parseStamp } from '../../src/reconcile/stamp.js';
import { expectedCase } from './caseStatusTable.js';
import type { ExpectedPortal } from './checks.js';
import type { Family } from './reconcileChecks.js';
import { expectedPortal } from './scenario.js';

/**
 * Stamps S/4HANA writes as it takes a change on: its clock at that moment, one millisecond apart at least, so
 * that a delta's window (which starts from this clock less the overlap) can see them. The plan's own times only
 * date the events.
 */
export function createS4Clock() {
  let lastMs = 0;
  const newest = new Map<Family, string>();
  return {
    /** The next stamp of a document of `family`, as an ISO instant. */
    stamp(family: Family): string {
      lastMs = Math.max(Date.now(), lastMs + 1);
      const iso = new Date(lastMs).toISOString();
      newest.set(family, parseStamp(iso) as string);
      return iso;
    },
    /** The newest 7-digit stamp written for each family. */
    newest,
  };
}

export type S4Clock = ReturnType<typeof createS4Clock>;

/** Open documents S/4HANA holds before the fleet starts: the first run of each family takes them on, unmailed. */
export function setBaselineDocuments(s4: S4Server, clock: S4Clock) {
  const orders = new Map<string, ExpectedPortal>();
  for (let i = 0; i < 4; i++) {
    const state = {
      salesOrder: String(8_200_000 + i),
      soldToParty: '17100001',
      customerReference: `PO-B${i}`,
      requestedDeliveryDate: `2026-12-0${i + 1}`,
      lastChangeDateTime: clock.stamp('salesOrder'),
      overallSDProcessStatus: 'B',
      overallDeliveryStatus: i % 2 === 0 ? 'A' : 'B',
      rejectionStatus: 'A',
      deliveryBlockReason: '',
    };
    s4.setOrder(state);
    orders.set(state.salesOrder, expectedPortal(state));
  }
  const returnState = {
    customerReturn: '61100000',
    lastChangeDateTime: clock.stamp('customerReturn'),
    soldToParty: '17100001',
    customerReference: 'RMA-B0',
    orderReason: '009',
    referenceSDDocument: '8200000',
    referenceSDDocumentCategory: 'C',
    overallSDProcessStatus: 'B',
    rejectionStatus: 'A',
    items: [{ customerReturnItem: '10', returnReason: '103' }],
  };
  s4.returns.setReturn(returnState);
  return { orders, cases: new Map([[returnState.customerReturn, expectedCase(returnState)]]) };
}

/** Waits until the first run of each family completed; false after `timeoutMs`. */
export async function baselinesDone(pool: pg.Pool, source: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await pool
      .query<{ n: number }>(
        `select count(distinct family)::int as "n" from reconcile_run
         where source = $1 and mode = 'baseline' and status = 'done'`,
        [source],
      )
      .catch(() => ({ rows: [{ n: 0 }] }));
    if ((rows[0]?.n ?? 0) >= 2) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

/**
 * The process running a reconciliation run right now, among `pids`: the backend holding a run's advisory lock
 * (src/reconcile/runLock.ts) while a run row is `running`, traced through its client port to the process that owns
 * the socket. Undefined when no run is going on.
 */
export async function runHolder(
  pool: pg.Pool,
  postgresPort: number,
  pids: number[],
): Promise<number | undefined> {
  const { rows } = await pool.query<{ port: number }>(
    `select a.client_port as "port"
     from pg_locks l join pg_stat_activity a on a.pid = l.pid
     where l.locktype = 'advisory' and l.granted and l.objsubid = 2
       and l.classid = (hashtext('fon.reconcile')::bigint & 4294967295)::oid
       and exists (select from reconcile_run where status = 'running')`,
  );
  for (const { port } of rows) {
    const inode = await socketInode(port, postgresPort);
    if (inode === undefined) continue;
    for (const pid of pids) if (await ownsSocket(pid, inode)) return pid;
  }
  return undefined;
}

/** The inode of the TCP socket from local `port` to `remotePort`, from /proc/net/tcp (IPv4, then IPv6). */
async function socketInode(port: number, remotePort: number): Promise<string | undefined> {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hex(port)}`) && fields[2]?.endsWith(`:${hex(remotePort)}`))
        return fields[9];
    }
  }
  return undefined;
}

async function ownsSocket(pid: number, inode: string): Promise<boolean> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    if (target === `socket:[${inode}]`) return true;
  }
  return false;
}
