// The outbox sender against real instances, a real crash, a slow relay and a failing database: each order's
// emails go out in outbox order, a crash delays its claimed mail by about one lease, a send longer than the
// lease goes out once, and a `sent` mark that fails on a dropped connection does not send the email again.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import type { ReceivedMail } from '../../sandbox/smtpServer.js';
import type { Service } from '../../src/service/buildService.js';
import { registerDestination } from '../support/destination.js';
import { startTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { serviceEnv } from '../support/serviceEnv.js';
import { spawnServiceProcess } from '../support/serviceProcess.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const LEASE_SECONDS = 5;
// What "about one lease" allows beyond the lease: the other instance's poll (200 ms here) and one send.
const SLACK_MS = 2000;

const world = useWorld();
const services: Service[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(services.splice(0).map((service) => service.stop()));
  world.smtp.setHold(undefined);
});

const { newOrder, changeOrder } = orderMaker(() => world.s4, 6_100_000);

/** An instance in this process, taking events by webhook, with the short lease the tests wait out. */
async function startInstance(): Promise<Service> {
  const service = await startTestService({
    ...world.endpoints(),
    env: { MAIL_LEASE_SECONDS: String(LEASE_SECONDS) },
  });
  services.push(service);
  return service;
}

/** The real service as its own process, so that it can be killed for real; resolves with its URL. */
async function spawnInstance(smtpUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const destination = registerDestination(world.s4.url);
  const instance = spawnServiceProcess({
    ...serviceEnv({ databaseUrl: world.db.url, s4Url: world.s4.url, smtpUrl, destination }),
    MAIL_LEASE_SECONDS: String(LEASE_SECONDS),
  });
  children.push(instance.child);
  return { child: instance.child, url: await instance.ready };
}

/** Accepts SMTP connections and never greets: a sender using it is stuck before it sends anything. */
async function startSilentRelay(): Promise<{ url: string; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => void sockets.add(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `smtp://127.0.0.1:${(server.address() as { port: number }).port}`,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

async function announce(url: string, salesOrder: string): Promise<void> {
  const res = await fetch(`${url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/cloudevents+json' },
    body: salesOrderEvent({ salesOrder }),
  });
  expect(res.status).toBe(200);
}

interface OutboxRow {
  messageId: string;
  state: string;
  attempts: number;
  leaseEndsAt: Date;
}

async function outboxOf(salesOrder: string): Promise<OutboxRow[]> {
  const { rows } = await world.db.pool.query<OutboxRow>(
    `select message_id as "messageId", state, attempts, next_attempt_at as "leaseEndsAt"
     from mail_outbox where family = 'salesOrder' and key = $1::text order by id`,
    [salesOrder],
  );
  return rows;
}

function mailsFor(salesOrders: string[]): ReceivedMail[] {
  return world.smtp.messages.filter((mail) => salesOrders.includes(mail.headers['x-sales-order'] ?? ''));
}

async function mailCounter(service: Service, result: string): Promise<number> {
  const res = await service.app.inject({ method: 'GET', url: '/metrics' });
  const line = res.body.split('\n').find((l) => l.startsWith(`fon_mail_total{result="${result}"}`));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

describe('mail order and leases across instances', () => {
  it("sends a crashed sender's claimed emails within about one lease, each order's older email before its newer one", async () => {
    const silent = await startSilentRelay();
    try {
      const first = await spawnInstance(silent.url);
      const orders = [newOrder(), newOrder(), newOrder()];
      for (const salesOrder of orders) await announce(first.url, salesOrder);
      await eventually('the first instance to claim every email', async () => {
        const rows = (await Promise.all(orders.map(outboxOf))).flat();
        return rows.length === 3 && rows.every((row) => row.attempts === 1);
      });
      first.child.kill('SIGKILL');
      await once(first.child, 'exit');
      const leases = (await Promise.all(orders.map(outboxOf))).flat();
      expect(leases.map((row) => row.state)).toEqual(['pending', 'pending', 'pending']);
      const leaseEnd = Math.max(...leases.map((row) => row.leaseEndsAt.getTime()));

      const second = await startInstance();
      const [changed] = orders as [string, string, string];
      changeOrder(changed, { overallSDProcessStatus: 'B', lastChangeDateTime: '2026-11-30T11:00:00Z' });
      await announce(second.url, changed);
      const mails = await eventually(
        'four emails',
        async () => (mailsFor(orders).length >= 4 ? mailsFor(orders) : undefined),
        LEASE_SECONDS * 1000 + 15_000,
      );

      const ofChanged = mails.filter((mail) => mail.headers['x-sales-order'] === changed);
      expect(ofChanged.map((mail) => mail.headers['x-portal-status'])).toEqual(['Open', 'InProcess']);
      const [older, newer] = ofChanged as [ReceivedMail, ReceivedMail];
      expect(newer.receivedAt).toBeGreaterThanOrEqual(older.receivedAt);
      for (const mail of mails.filter((m) => m !== newer)) {
        expect(leases.map((row) => row.messageId)).toContain(mail.messageId);
        expect(mail.receivedAt).toBeLessThanOrEqual(leaseEnd + SLACK_MS);
      }
      expect(new Set(mails.map((mail) => mail.messageId)).size).toBe(4);
    } finally {
      silent.close();
    }
  });

  it('sends once when SMTP holds DATA longer than the lease, because the sender renews it', async () => {
    const instances = [await startInstance(), await startInstance()];
    const salesOrder = newOrder();
    world.smtp.setHold(() => (LEASE_SECONDS + 3) * 1000);
    await announce(instances[0]?.url as string, salesOrder);
    const [mail] = await eventually(
      'the held email',
      async () => (mailsFor([salesOrder]).length > 0 ? mailsFor([salesOrder]) : undefined),
      (LEASE_SECONDS + 3) * 1000 + 15_000,
    );
    const [row] = await eventually('the sent mark', async () => {
      const rows = await outboxOf(salesOrder);
      return rows[0]?.state === 'sent' ? rows : undefined;
    });
    // A second claim counts attempts up; a second send under the hold would come only later.
    expect(row).toMatchObject({ messageId: mail?.messageId, attempts: 1 });
    expect(mailsFor([salesOrder])).toHaveLength(1);
  });
});

describe('the sent mark on a dropped database connection', () => {
  /**
   * Brings one email to the moment after SMTP accepted it: the relay holds DATA, this test takes the row's lock,
   * then lets the relay answer, so the sender's `sent` mark waits on the lock, where its backend can be killed.
   */
  async function heldAtTheMark(service: Service, salesOrder: string) {
    let releaseData = () => {};
    let dataArrived = false;
    world.smtp.setHold(({ callNo }) => {
      if (callNo > 1) return 0;
      dataArrived = true;
      return new Promise<void>((resolve) => {
        releaseData = resolve;
      });
    });
    await announce(service.url, salesOrder);
    await eventually('the email to reach DATA', async () => dataArrived);
    const locker = new pg.Client({ connectionString: world.db.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query(`select from mail_outbox where family = 'salesOrder' and key = $1::text for update`, [
      salesOrder,
    ]);
    releaseData();
    /** Terminates the backend of the mark waiting on the lock, once it waits; returns whether there was one. */
    const killWaitingMark = async () => {
      const { rows } = await world.db.pool.query<{ killed: boolean }>(
        `select pg_terminate_backend(pid) as "killed" from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'
           and query like 'update mail_outbox set state = ''sent''%'`,
      );
      return rows.some((row) => row.killed);
    };
    const unlock = async () => {
      await locker.query('rollback');
      await locker.end();
    };
    return { killWaitingMark, unlock };
  }

  it('records the send after the mark failed once, and delivers the email once', async () => {
    const service = await startInstance();
    const salesOrder = newOrder();
    const held = await heldAtTheMark(service, salesOrder);
    try {
      await eventually(
        'the mark to wait on the lock, and its backend to be terminated',
        held.killWaitingMark,
      );
    } finally {
      await held.unlock();
    }
    const [row] = await eventually('the sent mark', async () => {
      const rows = await outboxOf(salesOrder);
      return rows[0]?.state === 'sent' ? rows : undefined;
    });
    expect(row?.attempts).toBe(1);
    expect(mailsFor([salesOrder]).map((mail) => mail.messageId)).toEqual([row?.messageId]);
    expect(await mailCounter(service, 'resent')).toBe(0);
  });

  it('counts an email as resent when its mark keeps failing, and sends it again with the same Message-ID', async () => {
    const service = await startInstance();
    const salesOrder = newOrder();
    const resentBefore = await mailCounter(service, 'resent');
    const held = await heldAtTheMark(service, salesOrder);
    try {
      await eventually(
        'every try of the mark to be terminated',
        async () => {
          await held.killWaitingMark();
          return (await mailCounter(service, 'resent')) > resentBefore;
        },
        30_000,
      );
    } finally {
      await held.unlock();
    }
    const mails = await eventually(
      'the email again, after its lease',
      async () => (mailsFor([salesOrder]).length >= 2 ? mailsFor([salesOrder]) : undefined),
      LEASE_SECONDS * 1000 + 15_000,
    );
    const [row] = await eventually('the sent mark', async () => {
      const rows = await outboxOf(salesOrder);
      return rows[0]?.state === 'sent' ? rows : undefined;
    });
    expect(mails.map((mail) => mail.messageId)).toEqual([row?.messageId, row?.messageId]);
    expect(row?.attempts).toBe(2);
    expect(await mailCounter(service, 'resent')).toBe(resentBefore + 1);
  });
});
