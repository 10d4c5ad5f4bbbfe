import amqplib from 'amqplib';
import rhea from 'rhea';
import { describe, expect, it } from 'vitest';
import { S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import { hostileMessages, metadataHostileMessages, paddedEvent } from '../fixtures/hostileMessages.js';
import { openRheaConnection } from '../support/broker.js';
import { watchLogFor } from '../support/logGuard.js';
import { observe } from '../support/observe.js';
import { orderMaker } from '../support/orders.js';
import { AMQP_URL } from '../support/services.js';
import { useService } from '../support/useService.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const MAX_MESSAGE_BYTES = 256 * 1024;
const STORED_BODY_LIMIT = 1024 * 1024; // src/events/deadLetter.ts keeps at most this much of a body
const CHANGED = 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1';

/** One AMQP 1.0 message as it goes on the wire; `code` marks it in application-properties. */
interface WireMessage {
  code: string;
  body: Buffer;
  contentType: string | undefined;
  properties: Record<string, unknown>;
  amqpValue?: unknown;
}

const world = useWorld();
const view = observe(world);
/** The service's error lines: every refusal. */
const errorLines: string[] = [];
const running = useService(world, {
  queue: 'fon-bad-input',
  env: { MAX_MESSAGE_BYTES: String(MAX_MESSAGE_BYTES), LOG_LEVEL: 'error' },
  logLines: errorLines,
});

/**
 * Publishes with rhea, one message after the other, and resolves once the broker settled them all. Unlike
 * test/support/broker.ts it can leave out the content type and send amqp-value sections.
 */
async function publish(messages: WireMessage[]): Promise<string[]> {
  const connection = await openRheaConnection('fon-bad-input');
  const sender = connection.open_sender({ target: { address: running.queue.address } });
  await new Promise<void>((resolve) => sender.once('sendable', () => resolve()));
  const outcomes = new Map<unknown, (outcome: string) => void>();
  for (const event of ['accepted', 'rejected', 'released', 'modified'] as const) {
    sender.on(event, (context: rhea.EventContext) => outcomes.get(context.delivery)?.(event));
  }
  const settled: Promise<string>[] = [];
  for (const message of messages) {
    if (!sender.sendable()) await new Promise<void>((resolve) => sender.once('sendable', () => resolve()));
    const delivery = sender.send({
      body: message.amqpValue === undefined ? rhea.message.data_section(message.body) : message.amqpValue,
      ...(message.contentType === undefined ? {} : { content_type: message.contentType }),
      durable: true,
      application_properties: { ...message.properties, fonCase: message.code },
    });
    settled.push(new Promise((resolve) => outcomes.set(delivery, resolve)));
  }
  const result = await Promise.all(settled);
  connection.close();
  await new Promise<void>((resolve) => connection.once('connection_close', () => resolve()));
  return result;
}

/**
 * Waits until the dead-letter queue holds `count` messages, then takes them all over AMQP 0-9-1, keyed by the
 * `fonCase` marker.
 */
async function drainDeadLetterQueue(count: number, codes: string[]): Promise<Map<string, Buffer[]>> {
  const connection = await amqplib.connect(AMQP_URL);
  const channel = await connection.createChannel();
  await eventually(`${count} messages in the dead-letter queue`, async () => {
    return (await channel.checkQueue(running.queue.deadLetterName)).messageCount >= count;
  });
  const found = new Map<string, Buffer[]>();
  for (;;) {
    const message = await channel.get(running.queue.deadLetterName, { noAck: true });
    if (message === false) break;
    // RabbitMQ carries AMQP 1.0 application-properties to 0-9-1 as one encoded header.
    const encoded = String(message.properties.headers?.['x-amqp-1.0-app-properties'] ?? '');
    const code = codes.find((candidate) => encoded.includes(candidate)) ?? 'unmarked';
    found.set(code, [...(found.get(code) ?? []), message.content]);
  }
  await connection.close();
  return found;
}

const { newOrder } = orderMaker(() => world.s4, 7_100_000, {
  soldToParty: undefined,
  overallSDProcessStatus: undefined,
  overallDeliveryStatus: 'B',
});

/** Valid events in every shape the service accepts; each sales-order one names a fresh order. */
function validEvents(): Array<WireMessage & { salesOrder: string | undefined }> {
  const valid: Array<WireMessage & { salesOrder: string | undefined }> = [];
  const add = (salesOrder: string | undefined, body: string, extra: Partial<WireMessage> = {}) =>
    valid.push({
      code: `ok-${String(valid.length + 1).padStart(3, '0')}`,
      salesOrder,
      body: Buffer.from(body),
      contentType: 'application/json',
      properties: {},
      ...extra,
    });
  let order = newOrder();
  add(order, salesOrderEvent({ salesOrder: order }));
  order = newOrder();
  add(order, salesOrderEvent({ salesOrder: order }), { contentType: 'application/cloudevents+json' });
  order = newOrder();
  add(order, salesOrderEvent({ salesOrder: order }), { contentType: 'application/json; charset=UTF-8' });
  order = newOrder();
  add(order, salesOrderEvent({ salesOrder: order }), { contentType: undefined });
  order = newOrder();
  add(order, JSON.stringify({ SalesOrder: order }), {
    properties: {
      'cloudEvents:specversion': '1.0',
      'cloudEvents:id': `binary-${order}`,
      'cloudEvents:source': S4_SOURCE,
      'cloudEvents:type': CHANGED,
    },
  });
  order = newOrder();
  add(order, paddedEvent(MAX_MESSAGE_BYTES, order, `at-limit-${order}`, S4_SOURCE));
  order = newOrder();
  add(order, '', { amqpValue: salesOrderEvent({ salesOrder: order }), contentType: undefined });
  add(
    undefined,
    salesOrderEvent({
      type: 'sap.s4.beh.businesspartner.v1.BusinessPartner.Changed.v1',
      data: { BusinessPartner: '1' },
    }),
  );
  order = newOrder();
  add(
    order,
    salesOrderEvent({ salesOrder: order, data: { SalesOrder: order, constructor: 'x', toString: 'y' } }),
  );
  order = newOrder();
  const withBom = Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from(salesOrderEvent({ salesOrder: order, id: `Größe-注文-${order}` })),
  ]);
  valid.push({
    code: 'ok-bom',
    salesOrder: order,
    body: withBom,
    contentType: 'application/json',
    properties: {},
  });
  for (let i = 0; i < 3; i++) {
    order = newOrder();
    add(order, salesOrderEvent({ salesOrder: order }));
  }
  return valid;
}

describe('hostile messages on the real broker', () => {
  it('dead-letters every hostile message with its reason and processes every valid event between them', async () => {
    const corpus = hostileMessages(MAX_MESSAGE_BYTES);
    const valid = validEvents();
    const validOrders = valid.flatMap((event) => (event.salesOrder === undefined ? [] : [event.salesOrder]));
    // A valid event after every seventh hostile one, so that refusing one never holds up the next.
    const wire: WireMessage[] = [];
    let used = 0;
    corpus.forEach((message, index) => {
      wire.push(message);
      const between = valid[used];
      if (index % 7 === 6 && between !== undefined) {
        wire.push(between);
        used++;
      }
    });
    wire.push(...valid.slice(used));

    // The broker takes every one of them, the 3 MB body included: nothing is refused before the service.
    const outcomes = await publish(wire);
    expect(outcomes.every((outcome) => outcome === 'accepted')).toBe(true);

    const letters = await eventually(
      `${corpus.length} dead letters`,
      async () => {
        const { rows } = await world.db.pool.query<{
          code: string;
          reason: string;
          body: Buffer;
          eventId: string | null;
        }>(`select headers->>'fonCase' as "code", reason, body, event_id as "eventId" from dead_letter`);
        return rows.length >= corpus.length ? rows : undefined;
      },
      30_000,
    );
    const byCode = new Map(letters.map((letter) => [letter.code, letter]));
    expect(letters).toHaveLength(corpus.length);
    for (const message of corpus) {
      const letter = byCode.get(message.code);
      expect(letter, `${message.code} ${message.name}: no dead_letter row`).toBeDefined();
      expect(letter?.reason, `${message.code} ${message.name}`).toMatch(message.reason);
      expect(letter?.eventId, `${message.code}: refused before its identity was trusted`).toBeNull();
      if (message.amqpValue === undefined) {
        expect(letter?.body.equals(message.body.subarray(0, STORED_BODY_LIMIT)), `${message.code} body`).toBe(
          true,
        );
      }
    }
    const oversized = corpus.filter((message) => message.body.length > STORED_BODY_LIMIT);
    for (const message of oversized) {
      expect(byCode.get(message.code)?.reason).toMatch(/\(body stored truncated to 1048576 bytes\)$/);
    }

    const processed = await eventually('every valid event processed', async () => {
      const { rows } = await world.db.pool.query<{ outcome: string; n: number }>(
        `select outcome, count(*)::int as n from processed_event group by outcome order by outcome`,
      );
      const counts = Object.fromEntries(rows.map((row) => [row.outcome, row.n]));
      return counts.applied === validOrders.length && counts.ignored === 1 ? counts : undefined;
    });
    expect(processed).toEqual({ applied: validOrders.length, ignored: 1 });
    const { rows: portal } = await world.db.pool.query<{ salesOrder: string; portalStatus: string }>(
      `select sales_order as "salesOrder", portal_status as "portalStatus" from portal_order_status
       order by sales_order`,
    );
    expect(portal).toEqual(
      validOrders.sort().map((salesOrder) => ({ salesOrder, portalStatus: 'PartiallyDelivered' })),
    );
    await world.smtp.waitForCount(validOrders.length, 15_000);
    for (const salesOrder of validOrders) expect(view.mails(salesOrder), salesOrder).toHaveLength(1);

    // S/4HANA saw exactly one read per valid order, and none for any key a hostile message carried.
    for (const message of corpus) {
      if (message.salesOrder !== undefined) expect(world.s4.calls(message.salesOrder), message.name).toBe(0);
    }
    for (const salesOrder of validOrders) expect(world.s4.calls(salesOrder)).toBe(1);
    expect(world.s4.calls()).toBe(validOrders.length);

    // The broker's dead-letter queue holds each hostile message once, and nothing else.
    const codes = [...corpus, ...valid].map((message) => message.code);
    const dlq = await drainDeadLetterQueue(corpus.length, codes);
    expect([...dlq.keys()].sort()).toEqual(corpus.map((message) => message.code).sort());
    for (const copies of dlq.values()) expect(copies).toHaveLength(1);
    const big = corpus.find((message) => message.name === 'valid JSON of several MB');
    expect(big && dlq.get(big.code)?.[0]?.equals(big.body)).toBe(true);

    // Still alive and attached, and still working.
    expect(running.service.amqp?.isAttached()).toBe(true);
    const health = await running.service.app.inject({ method: 'GET', url: '/health' });
    expect(health.json()).toMatchObject({ status: 'UP', ready: true, checks: { amqp: 'attached' } });
    const last = newOrder();
    await publish([
      {
        code: 'ok-last',
        body: Buffer.from(salesOrderEvent({ salesOrder: last })),
        contentType: 'application/json',
        properties: {},
      },
    ]);
    await eventually('the last event processed', async () => view.mails(last).length === 1);
    await eventually('the queue to hold nothing ready or in flight', () => running.queue.isIdle());
  }, 90_000);

  it('records the reason of refused messages whose metadata PostgreSQL cannot store as it comes', async () => {
    const messages = metadataHostileMessages();
    const codes = messages.map((message) => message.code);
    // Whatever an earlier test left in the dead-letter queue is not this test's to count.
    await drainDeadLetterQueue(0, codes);
    await publish(messages);

    const letters = await eventually(`${messages.length} dead letters`, async () => {
      const { rows } = await world.db.pool.query<{ code: string; reason: string }>(
        `select headers->>'fonCase' as "code", reason from dead_letter where headers->>'fonCase' like 'hm-%'`,
      );
      return rows.length === messages.length ? rows : undefined;
    });
    for (const message of messages) {
      const letter = letters.find((row) => row.code === message.code);
      expect(letter?.reason, message.name).toMatch(message.reason);
      expect(world.s4.calls(message.salesOrder)).toBe(0);
    }
    const dlq = await drainDeadLetterQueue(messages.length, codes);
    expect([...dlq.keys()].sort()).toEqual(codes);
    await eventually('the queue to hold nothing ready or in flight', () => running.queue.isIdle());
  });

  it('refuses an event whose key is an email address without that address in its stored or logged reason', async () => {
    const address = 'ann.fleetwood@customer.example';
    watchLogFor('the address in the key', address);
    const from = errorLines.length;
    await publish([
      {
        code: 'address-key',
        body: Buffer.from(salesOrderEvent({ salesOrder: address })),
        contentType: 'application/json',
        properties: {},
      },
    ]);

    const reason = 'data.SalesOrder must be 1 to 10 letters or digits, got "[address]"';
    const rows = await eventually('the dead letter', async () => {
      const { rows } = await world.db.pool.query(
        `select reason from dead_letter where headers->>'fonCase' = 'address-key'`,
      );
      return rows.length > 0 ? rows : undefined;
    });
    expect(rows).toEqual([{ reason }]);
    const logged = errorLines.slice(from).map((line) => JSON.parse(line));
    expect(logged).toMatchObject([{ msg: 'event rejected', reason }]);
  });

  it('keeps header lines, recipients and HTML from S/4HANA free text out of the email', async () => {
    const salesOrder = newOrder({
      overallDeliveryStatus: 'C',
      customerReference:
        'PO-1\r\nBcc: attacker@evil.example\r\nX-Injected: yes\r\n\r\n.\r\nRCPT TO:<smuggled@evil.example>\r\n',
      soldToParty: '<script>alert(1)</script>\r\nCc: other@evil.example\n<b onclick="x">&amp;</b>',
    });
    await publish([
      {
        code: 'ok-inject',
        body: Buffer.from(salesOrderEvent({ salesOrder })),
        contentType: 'application/json',
        properties: {},
      },
    ]);
    const [mail] = await eventually('the mail', async () => {
      const mails = view.mails(salesOrder);
      return mails.length === 1 ? mails : undefined;
    });
    if (mail === undefined) throw new Error('no mail');

    expect(mail.to).toEqual(['fleet-manager@fleet.example']);
    expect(world.smtp.messages.flatMap((m) => m.to).filter((to) => to.includes('evil.example'))).toEqual([]);
    const headerBlock = mail.raw.slice(0, mail.raw.search(/\r?\n\r?\n/));
    expect(headerBlock).not.toMatch(/evil\.example|X-Injected|<script/i);
    expect(Object.keys(mail.headers)).not.toContain('bcc');
    expect(Object.keys(mail.headers)).not.toContain('cc');
    expect(Object.keys(mail.headers)).not.toContain('x-injected');
    // Only the reference's first word reaches the subject, as text.
    expect(mail.subject).toBe(`Sales order ${salesOrder} (PO-1): new order, delivered`);

    expect(mail.html).not.toMatch(/<script|<b /);
    expect(mail.html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(mail.html).toContain('&#60;b onclick=&#34;x&#34;&#62;&#38;amp;&#60;/b&#62;');
    // The text itself reaches the fleet manager, in the body where it cannot act as a header.
    expect(mail.text).toContain('Bcc: attacker@evil.example');
    await eventually('the queue to hold nothing ready or in flight', () => running.queue.isIdle());
  });
});
