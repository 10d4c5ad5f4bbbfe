// A redelivery through another path or a relay is a duplicate, not a conflict: real S/4HANA events, processed
// once, come back re-serialized by the official CloudEvents SDK (cloudevents 10), in binary mode with Event Hub's
// extension attributes, or structured with an extension, over the real AMQP consumer and the real webhook. A
// changed type or data under the same identity is still a conflict. Records written before the hash covered
// meaning only still tell a redelivery apart after the upgrade.

import { CloudEvent, HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { s4Event } from '../../sandbox/s4Events.js';
import type { OutgoingEvent } from '../support/broker.js';
import { eventually } from '../support/harness.js';
import { s4Sample } from '../support/realSamples.js';
import { useService } from '../support/useService.js';
import { useWorld } from '../support/world.js';

const CONFLICT = 'conflict: this source and id were processed with a different payload';
const EVENT_HUB_EXTENSIONS = { sapconsumertenant: 'a1b2c3d4-tenant', kafkapartition: 3, kafkaoffset: 18_270 };

const world = useWorld();
const running = useService(world, { queue: 'fon-meaning', env: { INGEST: 'amqp,webhook' } });

function setOrder(salesOrder: string): void {
  world.s4.setOrder({
    salesOrder,
    soldToParty: '17100001',
    requestedDeliveryDate: '2026-12-15',
    lastChangeDateTime: '2026-11-30T10:00:00Z',
    overallDeliveryStatus: 'B',
  });
}

/** The SDK's HTTP message as an AMQP message: binary-mode attributes become `cloudEvents:` properties. */
function overAmqp(message: { headers: Record<string, unknown>; body: unknown }): OutgoingEvent {
  const properties: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (name.startsWith('ce-')) properties[`cloudEvents:${name.slice(3)}`] = value;
  }
  return { body: String(message.body), contentType: String(message.headers['content-type']), properties };
}

/** Three ways a relay or a broker passes the event on. */
function copiesOf(event: Record<string, unknown>): OutgoingEvent[] {
  const sdkEvent = new CloudEvent(event);
  const binary = overAmqp(HTTP.binary(sdkEvent));
  return [
    overAmqp(HTTP.structured(sdkEvent)),
    // Event Hub's extensions in binary mode, numbers as numbers, as AMQP application-properties carry them.
    { ...binary, properties: { ...binary.properties, ...prefixed(EVENT_HUB_EXTENSIONS) } },
    { body: JSON.stringify({ ...event, kafkapartition: 0 }), contentType: 'application/json' },
  ];
}

function prefixed(attributes: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => [`cloudEvents:${name}`, value]),
  );
}

async function counted(channel: string, outcome: string, reason = ''): Promise<number> {
  const metrics = await running.service.app.inject({ method: 'GET', url: '/metrics' });
  const line = `fon_events_total{channel="${channel}",outcome="${outcome}",reason="${reason}"} `;
  const found = metrics.body.split('\n').find((candidate) => candidate.startsWith(line));
  return found === undefined ? 0 : Number(found.slice(line.length));
}

async function deadLetterReasons(eventId: string): Promise<string[]> {
  const { rows } = await world.db.pool.query<{ reason: string }>(
    `select reason from dead_letter where event_id = $1::text order by id`,
    [eventId],
  );
  return rows.map((row) => row.reason);
}

function mailsFor(salesOrder: string) {
  return world.smtp.messages.filter((mail) => mail.headers['x-sales-order'] === salesOrder);
}

describe('over AMQP', () => {
  it('takes nine re-serialized and extended copies of three processed events as duplicates, and changed ones as conflicts', async () => {
    const real = s4Sample('capire-salesorder-created').event;
    const events = [real, s4Event({ salesOrder: '5100001' }), s4Event({ salesOrder: '5100002' })] as Array<
      Record<string, unknown> & { id: string; data: { SalesOrder: string } }
    >;
    for (const event of events) setOrder(event.data.SalesOrder);
    await world.publisher.send(
      running.queue.address,
      events.map((event) => ({ body: JSON.stringify(event) })),
    );
    await eventually('three mails', async () =>
      events.every((event) => mailsFor(event.data.SalesOrder).length === 1),
    );

    await world.publisher.send(running.queue.address, events.flatMap(copiesOf));
    await eventually('nine duplicates', async () => (await counted('amqp', 'duplicate')) === 9);
    expect(await counted('amqp', 'rejected', 'conflict')).toBe(0);
    expect(await running.queue.drainDeadLetters()).toEqual([]);

    await world.publisher.send(running.queue.address, [
      { body: JSON.stringify({ ...real, type: 'sap.s4.beh.salesorder.v1.SalesOrder.Deleted.v1' }) },
      { body: JSON.stringify({ ...real, data: { SalesOrder: real.data.SalesOrder, SoldToParty: '1' } }) },
    ]);
    expect(
      await eventually('two conflicts', async () => {
        const reasons = await deadLetterReasons(real.id);
        return reasons.length === 2 && reasons;
      }),
    ).toEqual([CONFLICT, CONFLICT]);
    for (const event of events) {
      expect(world.s4.calls(event.data.SalesOrder)).toBe(1);
      expect(mailsFor(event.data.SalesOrder)).toHaveLength(1);
    }
  });

  it('after an upgrade, takes a redelivery of an event recorded with the earlier hash as a duplicate', async () => {
    const { text, event } = s4Sample('s4hclnt100-salesorder-changed.from-script');
    setOrder(event.data.SalesOrder);
    // The record as the earlier version wrote it: payload_hash over every attribute as written, unprefixed.
    await world.db.pool.query(
      `insert into processed_event (source, id, type, sales_order, outcome, payload_hash)
       values ($1::text, $2::text, $3::text, $4::text, 'applied', $5::text)`,
      [
        event.source,
        event.id,
        event.type,
        event.data.SalesOrder,
        '40ef3b0f9c014f1525ba67ad2f411f59c251829b9ffd074ef7703ec50111bb91',
      ],
    );
    const duplicatesBefore = await counted('amqp', 'duplicate');

    await world.publisher.send(running.queue.address, [{ body: text }]);
    await eventually(
      'the duplicate',
      async () => (await counted('amqp', 'duplicate')) === duplicatesBefore + 1,
    );
    expect(await deadLetterReasons(event.id)).toEqual([]);
    expect(world.s4.calls(event.data.SalesOrder)).toBe(0);

    // A copy whose attributes a relay rewrote cannot be told from a conflict against a hash of the bytes.
    await world.publisher.send(running.queue.address, [
      { body: HTTP.structured(new CloudEvent(event)).body as string },
    ]);
    expect(
      await eventually('the conflict', async () => {
        const reasons = await deadLetterReasons(event.id);
        return reasons.length === 1 && reasons;
      }),
    ).toEqual([`${CONFLICT} (recorded by an earlier version, compared as written)`]);
    expect(world.s4.calls(event.data.SalesOrder)).toBe(0);
  });
});

describe('over the Event Mesh webhook', () => {
  it('answers copies of a processed event as duplicates and a changed one as a conflict', async () => {
    const event = s4Event({ salesOrder: '5100003' }) as Record<string, unknown>;
    setOrder('5100003');
    const post = (message: { headers: Record<string, unknown>; body: unknown }) =>
      running.service.app.inject({
        method: 'POST',
        url: '/events',
        headers: message.headers as Record<string, string>,
        payload: String(message.body),
      });
    const original = await post({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event),
    });
    expect(original.json()).toEqual({ status: 'processed', result: 'applied' });

    const sdkEvent = new CloudEvent(event);
    const extended = sdkEvent.cloneWith(EVENT_HUB_EXTENSIONS);
    for (const copy of [HTTP.structured(sdkEvent), HTTP.binary(extended), HTTP.structured(extended)]) {
      const res = await post(copy);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'duplicate' });
    }
    const changed = await post(
      HTTP.binary(sdkEvent.cloneWith({ data: { SalesOrder: '5100003', SoldToParty: '2' } })),
    );
    expect(changed.statusCode).toBe(202);
    expect(changed.json().reason).toBe(CONFLICT);
    expect(world.s4.calls('5100003')).toBe(1);
  });
});
