// The core promise end to end, on the real PostgreSQL and RabbitMQ (AMQP 1.0), a real SMTP receiver and a
// local S/4HANA stand-in: one portal state and one email per real change, whatever the broker delivers.

import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { binaryEvent, salesOrderEvent } from '../../sandbox/s4Events.js';
import { observe } from '../support/observe.js';
import { orderMaker } from '../support/orders.js';
import { useService } from '../support/useService.js';
import { eventually, settled } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
const view = observe(world);
// Registered before the service, so that it runs once the service has stopped: no mail arrives after the clear.
afterEach(() => {
  world.smtp.clear();
  world.s4.setFault(undefined);
  world.smtp.setRefuse(undefined);
});
const running = useService(world, { queue: 'fon-core', perTest: true });

const { newOrder, changeOrder } = orderMaker(() => world.s4, 4_000_000);

/** `settled` for one order on this file's queue: nothing read afterwards about the order can still change. */
function orderSettled(expected: number, salesOrder: string): Promise<void> {
  return settled(view, [running.queue], [salesOrder], expected);
}

describe('processing S/4HANA sales-order events', () => {
  it('applies the current S/4HANA state and emails once when the same event is delivered three times', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'B' });
    const event = salesOrderEvent({ salesOrder });
    await world.publisher.send(running.queue.address, [{ body: event }, { body: event }, { body: event }]);

    // Settled: all three copies are handled (none ready or in flight) and the outbox is sent.
    await orderSettled(1, salesOrder);
    expect(await view.processed({ salesOrder })).toHaveLength(1);
    expect(await view.portalRow(salesOrder)).toMatchObject({
      portalStatus: 'PartiallyDelivered',
      date: '2026-12-15',
      customerReference: 'PO-4711',
      soldToParty: '17100001',
    });
    expect(await view.outbox(salesOrder)).toHaveLength(1);
    const mails = view.mails(salesOrder);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.headers['x-portal-status']).toBe('PartiallyDelivered');
    expect(mails[0]?.headers['x-requested-delivery-date']).toBe('2026-12-15');
    expect(mails[0]?.to).toEqual(['fleet-manager@fleet.example']);
    // A duplicate is recognised before S/4HANA is asked, and accepted: nothing is dead-lettered.
    expect(world.s4.calls(salesOrder)).toBe(1);
    expect(await running.queue.drainDeadLetters()).toEqual([]);
  });

  it('records the instance that claimed an email on its outbox row', async () => {
    const salesOrder = newOrder();
    await world.publisher.send(running.queue.address, [{ body: salesOrderEvent({ salesOrder }) }]);

    await orderSettled(1, salesOrder);
    const { rows } = await world.db.pool.query<{ leasedBy: string | null }>(
      `select leased_by as "leasedBy" from mail_outbox where family = 'salesOrder' and key = $1::text`,
      [salesOrder],
    );
    // The service runs in this process: its lease holder names this host and process.
    expect(rows).toEqual([
      { leasedBy: expect.stringMatching(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{8}$`)) },
    ]);
  });

  it('sends one email when three different events announce the same change', async () => {
    const salesOrder = newOrder({ overallSDProcessStatus: 'B' });
    const types = ['Changed.v1', 'OvrlSDProcStsChgd.v1', 'ItemChanged.v1'];
    await world.publisher.send(
      running.queue.address,
      types.map((type) => ({
        body: salesOrderEvent({ salesOrder, type: `sap.s4.beh.salesorder.v1.SalesOrder.${type}` }),
      })),
    );

    await orderSettled(3, salesOrder);
    expect((await view.portalRow(salesOrder))?.portalStatus).toBe('InProcess');
    expect(await view.outbox(salesOrder)).toHaveLength(1);
    expect(view.mails(salesOrder)).toHaveLength(1);
  });

  it('emails again only when status or requested delivery date really change', async () => {
    const salesOrder = newOrder();
    await world.publisher.send(running.queue.address, [{ body: salesOrderEvent({ salesOrder }) }]);
    await orderSettled(1, salesOrder);
    expect(view.mails(salesOrder)).toHaveLength(1);

    // A change the fleet manager does not care about: no email.
    changeOrder(salesOrder, { customerReference: 'PO-4712', lastChangeDateTime: '2026-11-30T11:00:00Z' });
    await world.publisher.send(running.queue.address, [{ body: salesOrderEvent({ salesOrder }) }]);
    await orderSettled(2, salesOrder);
    expect((await view.portalRow(salesOrder))?.customerReference).toBe('PO-4712');
    expect(await view.outbox(salesOrder)).toHaveLength(1);

    // The delivery date moves: one email.
    changeOrder(salesOrder, {
      requestedDeliveryDate: '2026-12-20',
      lastChangeDateTime: '2026-11-30T12:00:00Z',
    });
    await world.publisher.send(running.queue.address, [{ body: salesOrderEvent({ salesOrder }) }]);
    await orderSettled(3, salesOrder);
    expect(await view.outbox(salesOrder)).toHaveLength(2);
    expect(view.mails(salesOrder).map((mail) => mail.headers['x-requested-delivery-date'])).toEqual([
      '2026-12-15',
      '2026-12-20',
    ]);
    const ids = new Set(view.mails(salesOrder).map((mail) => mail.messageId));
    expect(ids.size).toBe(2);
  });

  it('records an event for an order deleted in S/4HANA as not found, accepts it and sends nothing', async () => {
    const salesOrder = newOrder();
    world.s4.deleteOrder(salesOrder);
    await world.publisher.send(running.queue.address, [
      { body: salesOrderEvent({ salesOrder, type: 'sap.s4.beh.salesorder.v1.SalesOrder.Deleted.v1' }) },
    ]);

    await orderSettled(1, salesOrder);
    expect(await view.processedCount({ salesOrder, outcome: 'not_found' })).toBe(1);
    expect(await view.portalRow(salesOrder)).toBeUndefined();
    expect(view.mails(salesOrder)).toHaveLength(0);
    expect(await running.queue.drainDeadLetters()).toEqual([]);
  });

  it('dead-letters a malformed payload with its reason and processes the valid events around it', async () => {
    const before = newOrder();
    const after = newOrder();
    await world.publisher.send(running.queue.address, [
      { body: salesOrderEvent({ salesOrder: before }) },
      {
        body: '{"specversion":"1.0","id":"x1","source":"/s","type":"sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1"',
      },
      { body: salesOrderEvent({ salesOrder: "1') or ('1" }) },
      { body: salesOrderEvent({ salesOrder: after }) },
    ]);

    await orderSettled(1, before);
    await orderSettled(1, after);
    const letters = await eventually('two dead letters', async () => {
      const { rows } = await world.db.pool.query<{ reason: string; body: Buffer }>(
        `select reason, body from dead_letter where channel = 'amqp' order by id`,
      );
      return rows.length === 2 ? rows : undefined;
    });
    // Both are handled concurrently, so either may be recorded first.
    expect(letters.map((letter) => letter.reason).sort()).toEqual([
      expect.stringMatching(/^body is not valid JSON/),
      'data.SalesOrder must be 1 to 10 letters or digits, got "1\') or (\'1"',
    ]);
    const dlq: string[] = [];
    await eventually('the dead-letter queue to hold both', async () => {
      for (const letter of await running.queue.drainDeadLetters()) dlq.push(letter.body);
      return dlq.length >= 2;
    });
    expect(dlq).toHaveLength(2);
    expect(dlq.some((body) => body.includes('"id":"x1"'))).toBe(true);
    // Each valid event was read once; the hostile key never reached S/4HANA.
    expect(world.s4.calls(before)).toBe(1);
    expect(world.s4.calls(after)).toBe(1);
    expect(world.s4.calls("1') or ('1")).toBe(0);
  });

  it('retries while S/4HANA answers 503 and applies the state once it recovers', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'C' });
    world.s4.setFault((order, callNo) => (order === salesOrder && callNo <= 4 ? 'unavailable' : 'ok'));
    await world.publisher.send(running.queue.address, [{ body: salesOrderEvent({ salesOrder }) }]);

    await orderSettled(1, salesOrder);
    expect((await view.portalRow(salesOrder))?.portalStatus).toBe('Delivered');
    // 3 tries per delivery in this harness: the first delivery was released, the second succeeded.
    expect(world.s4.calls(salesOrder)).toBe(5);
    expect(view.mails(salesOrder)).toHaveLength(1);
  });

  it('keeps the newer portal state when an older S/4HANA state is read later', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'C', lastChangeDateTime: '2026-11-30T12:00:00Z' });
    await world.publisher.send(running.queue.address, [{ body: salesOrderEvent({ salesOrder }) }]);
    await orderSettled(1, salesOrder);

    // A lagging replica answers with an older version of the order.
    changeOrder(salesOrder, { overallDeliveryStatus: 'B', lastChangeDateTime: '2026-11-30T09:00:00Z' });
    await world.publisher.send(running.queue.address, [{ body: salesOrderEvent({ salesOrder }) }]);
    await orderSettled(2, salesOrder);

    expect((await view.portalRow(salesOrder))?.portalStatus).toBe('Delivered');
    expect(await view.processedCount({ salesOrder, outcome: 'stale' })).toBe(1);
    expect(await view.outbox(salesOrder)).toHaveLength(1);
    expect(view.mails(salesOrder)).toHaveLength(1);
  });

  it('delivers the email with the same Message-ID after SMTP refused it once', async () => {
    const salesOrder = newOrder();
    world.smtp.setRefuse((mail) => (mail.callNo === 1 ? 'transient' : 'accept'));
    await world.publisher.send(running.queue.address, [{ body: salesOrderEvent({ salesOrder }) }]);

    await orderSettled(1, salesOrder);
    const mails = view.mails(salesOrder);
    expect(mails).toHaveLength(1);
    expect(await view.outbox(salesOrder)).toMatchObject([
      { state: 'sent', attempts: 2, messageId: mails[0]?.messageId },
    ]);
  });

  it('accepts binary-mode events with attributes in application properties', async () => {
    const salesOrder = newOrder();
    const { attributes, body } = binaryEvent(
      { salesOrder, id: 'binary-1', type: 'Created.v1' },
      'cloudEvents:',
    );
    await world.publisher.send(running.queue.address, [{ body, properties: attributes }]);
    await orderSettled(1, salesOrder);
    expect((await view.portalRow(salesOrder))?.portalStatus).toBe('Open');
  });

  it('records events of other types as ignored without asking S/4HANA', async () => {
    const calls = world.s4.calls();
    await world.publisher.send(running.queue.address, [
      {
        body: salesOrderEvent({
          type: 'sap.s4.beh.businesspartner.v1.BusinessPartner.Changed.v1',
          data: { BusinessPartner: '1' },
        }),
      },
    ]);
    await eventually(
      'the ignored event',
      async () => (await view.processedCount({ outcome: 'ignored' })) === 1,
    );
    expect(world.s4.calls()).toBe(calls);
  });
});
