// Poison messages and identity conflicts: a message that kills the process is stopped by the delivery count,
// a reused identity with another payload is refused, and a duplicate that outlived its record does no harm.
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { observe } from '../support/observe.js';
import { orderMaker } from '../support/orders.js';
import { serviceEnv } from '../support/serviceEnv.js';
import { type ServiceProcess, spawnServiceProcess } from '../support/serviceProcess.js';
import { useService } from '../support/useService.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
const view = observe(world);

const { newOrder, changeOrder } = orderMaker(() => world.s4, 7_300_000, {
  soldToParty: undefined,
  overallSDProcessStatus: undefined,
  overallDeliveryStatus: 'B',
});

/** The event's processed record, if any. */
async function processed(id: string) {
  return (await view.processed({ id }))[0];
}

async function deadLetters(eventId: string): Promise<string[]> {
  const { rows } = await world.db.pool.query<{ reason: string }>(
    `select reason from dead_letter where event_id = $1::text order by id`,
    [eventId],
  );
  return rows.map((row) => row.reason);
}

/** The bodies in the dead-letter queue once it held at least `count`; the row is written before the settle. */
async function drainAtLeast(queue: TestQueue, count: number): Promise<string[]> {
  const bodies: string[] = [];
  await eventually(`${count} messages in the dead-letter queue`, async () => {
    bodies.push(...(await queue.drainDeadLetters()).map((letter) => letter.body));
    return bodies.length >= count;
  });
  return bodies;
}

describe('one identity, one effect', () => {
  const running = useService(world, { queue: 'fon-identity' });

  it('dead-letters a known source and id arriving with a different payload as a conflict and changes nothing', async () => {
    const salesOrder = newOrder();
    const id = 'conflict-1';
    await world.publisher.send(running.queue.address, [{ body: salesOrderEvent({ salesOrder, id }) }]);
    await eventually('the first mail', async () => view.mails(salesOrder).length === 1);
    const before = await view.portalRow(salesOrder);
    const hash = (await processed(id))?.payloadHash;

    // S/4HANA moved on: applying anything for this order now would change the portal and send a mail.
    changeOrder(salesOrder, { overallDeliveryStatus: 'C', lastChangeDateTime: '2026-11-30T11:00:00Z' });
    const other = newOrder();
    const reads = world.s4.calls();
    await world.publisher.send(running.queue.address, [
      { body: salesOrderEvent({ salesOrder: other, id }) },
      { body: salesOrderEvent({ salesOrder, id, type: 'sap.s4.beh.salesorder.v1.SalesOrder.Deleted.v1' }) },
    ]);

    const reasons = await eventually('two dead letters', async () => {
      const found = await deadLetters(id);
      return found.length === 2 ? found : undefined;
    });
    expect(reasons).toEqual([
      'conflict: this source and id were processed with a different payload',
      'conflict: this source and id were processed with a different payload',
    ]);
    const dlq = await drainAtLeast(running.queue, 2);
    expect(dlq.map((body) => body.includes(`"id":"${id}"`))).toEqual([true, true]);
    const metrics = await running.service.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain(
      'fon_events_total{channel="amqp",outcome="rejected",reason="conflict",family="sales_order"} 2',
    );

    expect(await view.portalRow(salesOrder)).toEqual(before);
    expect(await view.portalRow(other)).toBeUndefined();
    expect((await processed(id))?.payloadHash).toBe(hash);
    expect(world.s4.calls()).toBe(reads);
    expect(await view.outbox(salesOrder)).toHaveLength(1);
    expect(view.mails(salesOrder)).toHaveLength(1);
    expect(await running.queue.depth()).toBe(0);
  });

  it('reads S/4HANA again for a duplicate whose record expired and sends no second mail', async () => {
    const salesOrder = newOrder();
    const id = 'expired-duplicate-1';
    const event = salesOrderEvent({ salesOrder, id });
    await world.publisher.send(running.queue.address, [{ body: event }]);
    await eventually('the first mail', async () => view.mails(salesOrder).length === 1);
    const before = await view.portalRow(salesOrder);

    // Retention removed the record; the broker then redelivers the same message.
    await world.db.pool.query(`delete from processed_event where source = $1::text and id = $2::text`, [
      S4_SOURCE,
      id,
    ]);
    await world.publisher.send(running.queue.address, [{ body: event }]);

    await eventually('the event processed again', async () => (await processed(id))?.outcome === 'applied');
    expect(world.s4.calls(salesOrder)).toBe(2);
    const after = await view.portalRow(salesOrder);
    expect(after).toEqual({ ...before, readAt: expect.any(Date) });
    expect(after?.readAt.getTime()).toBeGreaterThan(before?.readAt.getTime() ?? Number.POSITIVE_INFINITY);
    // The decision and its outbox row commit with the record, so the outbox is final once the record is back.
    expect(await view.outbox(salesOrder)).toHaveLength(1);
    expect(view.mails(salesOrder)).toHaveLength(1);
    expect(await deadLetters(id)).toEqual([]);
  });
});

describe('a message that kills the process', () => {
  let queue: TestQueue;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    queue = await createTestQueue('fon-poison');
  });
  afterAll(async () => {
    world.s4.setFault(undefined);
    for (const { child } of processes)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await queue?.delete();
  });

  async function startProcess(): Promise<ServiceProcess> {
    const started = spawnServiceProcess({
      ...serviceEnv({
        ...world.endpoints(),
        queueAddress: queue.address,
        destination: 'S4_POISON',
      }),
      DATABASE_POOL_SIZE: '4',
      // One message at a time: a poison message then blocks the queue until the delivery limit stops it,
      // which is the crash loop at its worst.
      AMQP_PREFETCH: '1',
      S4_TIMEOUT_MS: '60000',
      MAX_DELIVERIES: '3',
    });
    processes.push(started);
    await started.ready;
    return started;
  }

  it('dead-letters it on the delivery after MAX_DELIVERIES and keeps processing other events', async () => {
    onTestFailed(() => {
      processes.forEach(({ log }, index) => {
        console.error(`--- process ${index + 1} log ---\n${log.slice(-40).join('\n')}`);
      });
    });
    const poison = newOrder();
    const poisonId = `poison-${poison}`;
    let kills = 0;
    // The read for the poison order never answers and the process dies on it: as if it crashed every time.
    // The newest process is the one reading: it may ask before startProcess() has even returned it.
    world.s4.setFault((salesOrder) => {
      if (salesOrder !== poison) return 'ok';
      kills++;
      processes.at(-1)?.child.kill('SIGKILL');
      return 'hang';
    });

    const before = [newOrder(), newOrder()];
    await world.publisher.send(
      queue.address,
      before.map((salesOrder) => ({ body: salesOrderEvent({ salesOrder }) })),
    );
    let current = await startProcess();
    await eventually('mails for the events before the poison', async () =>
      before.every((salesOrder) => view.mails(salesOrder).length === 1),
    );

    const behind = [newOrder(), newOrder()];
    await world.publisher.send(queue.address, [
      { body: salesOrderEvent({ salesOrder: poison, id: poisonId }) },
      ...behind.map((salesOrder) => ({ body: salesOrderEvent({ salesOrder }) })),
    ]);
    // Each death is followed by a restart, as the platform would do, until the poison stops arriving.
    for (let restarts = 0; restarts < 5; restarts++) {
      const running = current.child;
      const outcome = await eventually(
        'the process to die or the poison to be dead-lettered',
        async () => {
          if (running.exitCode !== null || running.signalCode !== null) return 'died';
          return (await deadLetters(poisonId)).length === 1 ? 'dead-lettered' : undefined;
        },
        60_000,
      );
      if (outcome !== 'died') break;
      current = await startProcess();
    }

    expect(kills).toBe(3);
    expect(processes).toHaveLength(4);
    expect(world.s4.calls(poison)).toBe(3);
    const reasons = await deadLetters(poisonId);
    expect(reasons).toEqual([
      expect.stringMatching(
        /^delivery limit reached: 3 deliveries did not complete \(last error: none recorded/,
      ),
    ]);
    expect(await processed(poisonId)).toBeUndefined();
    expect(await view.portalRow(poison)).toBeUndefined();

    await eventually('mails for the events behind the poison', async () =>
      behind.every((salesOrder) => view.mails(salesOrder).length === 1),
    );
    const after = newOrder();
    await world.publisher.send(queue.address, [{ body: salesOrderEvent({ salesOrder: after }) }]);
    await eventually('the mail for an event after the poison', async () => view.mails(after).length === 1);

    for (const salesOrder of [...before, ...behind, after]) {
      expect((await view.portalRow(salesOrder))?.portalStatus, salesOrder).toBe('PartiallyDelivered');
      expect(view.mails(salesOrder), salesOrder).toHaveLength(1);
    }
    const letters = await drainAtLeast(queue, 1);
    expect(letters.map((body) => body.includes(`"id":"${poisonId}"`))).toEqual([true]);

    // No further death: the last process is still running, and stops cleanly with nothing left behind.
    expect(current.child.exitCode).toBeNull();
    expect(kills).toBe(3);
    current.child.kill('SIGTERM');
    const [code] = (await current.exited) as [number | null];
    expect(code).toBe(0);
    expect(await queue.depth()).toBe(0);
  }, 180_000);
});
