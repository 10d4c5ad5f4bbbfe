// What an operator relies on: /health, /metrics, the log lines, and a shutdown that loses nothing.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import amqplib from 'amqplib';
import { beforeAll, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import { createTestQueue } from '../support/broker.js';
import { startTestService } from '../support/harness.js';
import { AMQP_URL } from '../support/services.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();

beforeAll(async () => {
  world.s4.setOrder({
    salesOrder: '7000001',
    lastChangeDateTime: '2026-11-30T10:00:00Z',
    requestedDeliveryDate: '2026-12-01',
  });
});

describe('health, metrics and logs', () => {
  it('reports the database, the AMQP link and the outbox, counts events in /metrics, and logs without secrets', async () => {
    const queue = await createTestQueue('fon-ops');
    const logLines: string[] = [];
    const service = await startTestService({
      ...world.endpoints(),
      queueAddress: queue.address,
      env: { LOG_LEVEL: 'info' },
      logLines,
    });
    try {
      const event = salesOrderEvent({ salesOrder: '7000001', id: 'ops-1' });
      await world.publisher.send(queue.address, [{ body: event }, { body: event }, { body: '{"broken"' }]);
      await world.smtp.waitForCount(1);
      await eventually('all three handled', async () => (await queue.depth()) === 0 && logLines.length > 0);

      const health = await service.app.inject({ method: 'GET', url: '/health' });
      expect(health.statusCode).toBe(200);
      expect(health.json()).toEqual({
        status: 'UP',
        ready: true,
        checks: { database: 'up', amqp: 'attached', outbox: { pending: 0, oldestPendingSeconds: 0 } },
      });

      const metrics = await eventually('metrics of all three', async () => {
        const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body;
        return text.includes('outcome="rejected"') ? text : undefined;
      });
      expect(metrics).toMatch(
        /fon_events_total\{channel="amqp",outcome="applied",reason="",family="sales_order"\} 1/,
      );
      expect(metrics).toMatch(
        /fon_events_total\{channel="amqp",outcome="duplicate",reason="",family="sales_order"\} 1/,
      );
      expect(metrics).toMatch(
        /fon_events_total\{channel="amqp",outcome="rejected",reason="invalid_event",family="none"\} 1/,
      );
      expect(metrics).toMatch(/fon_s4_request_duration_seconds_count\{result="ok"\} 1/);
      expect(metrics).toMatch(/fon_mail_total\{result="sent"\} 1/);
      expect(metrics).toMatch(/fon_mail_outbox\{state="pending"\} 0/);
      expect(metrics).toMatch(/fon_processed_event_retention_seconds 604800/);

      const entries = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const processed = entries.find((entry) => entry.msg === 'event processed');
      expect(processed).toMatchObject({
        source: '/default/sap.s4.beh/244572008',
        id: 'ops-1',
        salesOrder: '7000001',
      });
      expect(processed?.type).toBe('sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1');
      expect(entries.find((entry) => entry.msg === 'event rejected')).toMatchObject({
        reason: expect.stringMatching(/not valid JSON/),
      });
      const all = logLines.join('\n');
      expect(all).not.toMatch(/fleet-manager@fleet\.example|notifier@fleet\.example/);
      expect(all).not.toContain('guest:guest');
    } finally {
      await service.stop();
      await queue.delete();
    }
  });

  it('stays live but not ready while its queue is missing, so the platform does not restart it', async () => {
    const name = `fon-ops-missing-${randomBytes(4).toString('hex')}`;
    const logLines: string[] = [];
    const service = await startTestService({
      ...world.endpoints(),
      queueAddress: `/amq/queue/${name}`,
      waitForAttach: false,
      logLines,
      env: { LOG_LEVEL: 'error' },
    });
    const broker = await amqplib.connect(AMQP_URL);
    try {
      // The broker refused the attach (the queue is missing), not merely "not attached yet".
      await eventually('the broker to refuse the missing queue', async () =>
        logLines.some((line) => line.includes('AMQP error; reconnecting')),
      );
      const health = await service.app.inject({ method: 'GET', url: '/health' });
      expect(health.statusCode).toBe(200);
      expect(health.json()).toMatchObject({ status: 'UP', ready: false, checks: { amqp: 'detached' } });

      // Once the queue exists the service attaches by itself and becomes ready.
      await (await broker.createChannel()).assertQueue(name, { durable: true });
      const ready = await eventually(
        'ready once the queue exists',
        async () => {
          const answer = await service.app.inject({ method: 'GET', url: '/health' });
          return answer.json().ready === true ? answer : undefined;
        },
        30_000,
      );
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'UP', checks: { amqp: 'attached' } });
    } finally {
      await service.stop();
      const channel = await broker.createChannel();
      await channel.deleteQueue(name);
      await broker.close();
    }
  });
});

describe('shutdown', () => {
  it('stops within the platform budget and returns an in-flight message to the queue', async () => {
    const queue = await createTestQueue('fon-ops-stop');
    world.s4.setOrder({ salesOrder: '7000002', lastChangeDateTime: '2026-11-30T10:00:00Z' });
    world.s4.setFault((salesOrder) => (salesOrder === '7000002' ? 'hang' : 'ok'));
    const service = await startTestService({
      ...world.endpoints(),
      queueAddress: queue.address,
      env: { S4_TIMEOUT_MS: '4000' },
    });
    try {
      await world.publisher.send(queue.address, [
        { body: salesOrderEvent({ salesOrder: '7000002', id: 'stop-1' }) },
      ]);
      await eventually('the S/4HANA read to hang', async () => world.s4.calls('7000002') > 0);

      const started = Date.now();
      await service.stop();
      // Cloud Foundry sends SIGKILL 10 s after SIGTERM; the stop's own budget is 8 s, so it is over before that.
      expect(Date.now() - started).toBeLessThan(10_000);
      await eventually('the message back in the queue', async () => (await queue.depth()) === 1);
      const { rows } = await world.db.pool.query(`select 1 from processed_event where id = 'stop-1'`);
      expect(rows).toHaveLength(0);
    } finally {
      world.s4.setFault(undefined);
      await queue.delete();
    }
  });

  it('closes the database connections it opened when the start fails', async () => {
    // The port is taken, so listening fails after the pool has connected and migrated.
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    const since = new Date();
    const sessions = async () =>
      (
        await world.db.pool.query<{ n: number }>(
          `select count(*)::int as "n" from pg_stat_activity
           where datname = current_database() and pid <> pg_backend_pid() and backend_start >= $1::timestamptz`,
          [since],
        )
      ).rows[0]?.n;
    try {
      await expect(
        startTestService({
          ...world.endpoints(),
          env: { PORT: String(port) },
        }),
      ).rejects.toThrow(/EADDRINUSE/);
      // Well within the pool's 10 s idle timeout, which would close a forgotten connection by itself.
      await eventually('no session of the failed start', async () => (await sessions()) === 0, 3000);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
