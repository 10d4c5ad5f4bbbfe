// A redelivery through another path or a relay is a duplicate, not a conflict: S/4HANA events (hand-made, and real
// ones when found), processed once, come back re-serialized by the official CloudEvents SDK (cloudevents 10), in
// binary mode with Event Hub's extension attributes, or structured with an extension, over the real AMQP consumer
// and the real webhook. A changed type or data under the same identity is still a conflict. Records written before
// the hash covered meaning only still tell a redelivery apart after the upgrade.

import { CloudEvent, HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { s4Event } from '../../sandbox/s4Events.js';
import type { OutgoingEvent } from '../support/broker.js';
import {
  CAPIRE_EVENT,
  HAND_MADE_CHANGED,
  HAND_MADE_CREATED,
  readEvent,
  SCRIPT_EVENT,
} from '../support/realSamples.js';
import { useService } from '../support/useService.js';
import { eventually } from '../support/waits.js';
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
  // Summed over the families: the count as it was before events had one.
  const series = `fon_events_total{channel="${channel}",outcome="${outcome}",reason="${reason}",family="`;
  const lines = metrics.body.split('\n').filter((candidate) => candidate.startsWith(series));
  return lines.reduce((sum, line) => sum + Number(line.split(' ')[1]), 0);
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
  // Each sample with two events of the sandbox's shape beside it, under sales orders of their own.
  const PROCESSED = [
    { sample: HAND_MADE_CHANGED, others: ['5100011', '5100012'] },
    { sample: CAPIRE_EVENT, others: ['5100001', '5100002'] },
  ];
  for (const { sample, others } of PROCESSED) {
    it(
      `takes nine re-serialized and extended copies of three processed events, the ${sample.source.origin} ${sample.name} among them, as duplicates, and changed ones as conflicts`,
      sample.source.options,
      async () => {
        const sampled = readEvent(sample).event;
        const events = [sampled, ...others.map((salesOrder) => s4Event({ salesOrder }))] as Array<
          Record<string, unknown> & { id: string; data: { SalesOrder: string } }
        >;
        for (const event of events) setOrder(event.data.SalesOrder);
        const duplicatesBefore = await counted('amqp', 'duplicate');
        const conflictsBefore = await counted('amqp', 'rejected', 'conflict');
        await world.publisher.send(
          running.queue.address,
          events.map((event) => ({ body: JSON.stringify(event) })),
        );
        await eventually('three mails', async () =>
          events.every((event) => mailsFor(event.data.SalesOrder).length === 1),
        );

        await world.publisher.send(running.queue.address, events.flatMap(copiesOf));
        await eventually(
          'nine duplicates',
          async () => (await counted('amqp', 'duplicate')) === duplicatesBefore + 9,
        );
        expect(await counted('amqp', 'rejected', 'conflict')).toBe(conflictsBefore);
        expect(await running.queue.drainDeadLetters()).toEqual([]);

        await world.publisher.send(running.queue.address, [
          { body: JSON.stringify({ ...sampled, type: 'sap.s4.beh.salesorder.v1.SalesOrder.Deleted.v1' }) },
          {
            body: JSON.stringify({
              ...sampled,
              data: { SalesOrder: sampled.data.SalesOrder, SoldToParty: '1' },
            }),
          },
        ]);
        expect(
          await eventually('two conflicts', async () => {
            const reasons = await deadLetterReasons(sampled.id);
            return reasons.length === 2 && reasons;
          }),
        ).toEqual([CONFLICT, CONFLICT]);
        // Refused, both leave through the dead-letter queue; taking them leaves it empty for the next sample.
        const letters: Array<{ body: string }> = [];
        await eventually('both conflicts in the dead-letter queue', async () => {
          letters.push(...(await running.queue.drainDeadLetters()));
          return letters.length >= 2;
        });
        expect(letters.map((letter) => JSON.parse(letter.body).id)).toEqual([sampled.id, sampled.id]);
        for (const event of events) {
          expect(world.s4.calls(event.data.SalesOrder)).toBe(1);
          expect(mailsFor(event.data.SalesOrder)).toHaveLength(1);
        }
      },
    );
  }

  // What the earlier version recorded for each sample: payload_hash over every attribute as written, unprefixed.
  const RECORDED_EARLIER = [
    {
      sample: HAND_MADE_CREATED,
      recorded: 'c9f36b0c7268be5b1cb5391b8a210278f840a1b3eca9081b5dbddb34ed0d2a2e',
    },
    { sample: SCRIPT_EVENT, recorded: '40ef3b0f9c014f1525ba67ad2f411f59c251829b9ffd074ef7703ec50111bb91' },
  ];
  for (const { sample, recorded } of RECORDED_EARLIER) {
    it(
      `after an upgrade, takes a redelivery of the ${sample.source.origin} event ${sample.name}, recorded with the earlier hash, as a duplicate`,
      sample.source.options,
      async () => {
        const { text, event } = readEvent(sample);
        setOrder(event.data.SalesOrder);
        await world.db.pool.query(
          `insert into processed_event (source, id, type, family, key, outcome, payload_hash)
         values ($1::text, $2::text, $3::text, 'salesOrder', $4::text, 'applied', $5::text)`,
          [event.source, event.id, event.type, event.data.SalesOrder, recorded],
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
      },
    );
  }
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
