// A refused message is refused once, whatever the broker does with `rejected`. Against the test kit's AMQP 1.0
// broker in both readings: "rejected comes back" (SAP Event Mesh, counted toward a maximum redelivery count left
// at 0, forever) and "rejected goes to the dead-message queue" (RabbitMQ); then against the real RabbitMQ, over
// the webhook, through an operator's replay, and with two refusals of one message at once, forced by a lock:
// the second is counted and logged as what it is settled as.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { DeadLetter } from '../../src/events/deadLetter.js';
import { recordDeadLetter } from '../../src/events/deadLetter.js';
import { refuse } from '../../src/events/refuse.js';
import type { Service, ServiceParts } from '../../src/service/buildService.js';
import { type AmqpTestBroker, type Settlement, startAmqpTestBroker } from '../support/amqpTestBroker.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { buildTestService, startTestService } from '../support/harness.js';
import { guardedLogger } from '../support/logGuard.js';
import { observe } from '../support/observe.js';
import { orderMaker } from '../support/orders.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const MAX_DELIVERIES = 2;
const CHANGED = 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1';

const world = useWorld();
const view = observe(world);
const { newOrder } = orderMaker(() => world.s4, 7_900_000, {
  soldToParty: undefined,
  overallSDProcessStatus: undefined,
  overallDeliveryStatus: 'B',
});

interface Letter {
  id: string;
  reason: string;
  eventId: string | null;
  attributeId: string | null;
  replayedAt: Date | null;
}

/** Dead letters whose body is `body`, oldest first. */
async function lettersWithBody(body: string): Promise<Letter[]> {
  const { rows } = await world.db.pool.query<Letter>(
    `select id::text as "id", reason, event_id as "eventId", attributes->>'id' as "attributeId",
            replayed_at as "replayedAt"
     from dead_letter where body = convert_to($1::text, 'UTF8') order by id`,
    [body],
  );
  return rows;
}

/** The value of fon_events_total for these labels, 0 when the series does not exist yet. */
async function eventsTotal(app: ServiceParts['app'], channel: string, outcome: string, reason = '') {
  const { body } = await app.inject({ method: 'GET', url: '/metrics' });
  // Summed over the families: the count as it was before events had one.
  const series = `fon_events_total{channel="${channel}",outcome="${outcome}",reason="${reason}",family="`;
  const lines = body.split('\n').filter((candidate) => candidate.startsWith(series));
  return lines.reduce((sum, line) => sum + Number(line.split(' ')[1]), 0);
}

/** An event whose deliveries have all been used up: its next delivery is past the limit. */
async function atDeliveryLimit(id: string): Promise<void> {
  await world.db.pool.query(
    `insert into event_attempt (source, id, attempts, last_error) values ($1::text, $2::text, $3::int, $4::text)`,
    [S4_SOURCE, id, MAX_DELIVERIES, 'TransientError: S/4HANA answered 503'],
  );
}

const BROKERS = [
  {
    name: 'rejected comes back (Event Mesh)',
    rejected: 'redeliver',
    // Refused on the first delivery, recognised and taken on the second; the broker then forgets it.
    refused: ['rejected', 'accepted'],
  },
  { name: 'rejected goes to the dead-message queue', rejected: 'dead-letter', refused: ['rejected'] },
] as const satisfies ReadonlyArray<{
  name: string;
  rejected: 'redeliver' | 'dead-letter';
  refused: readonly Settlement[];
}>;

/** The test kit's broker with `rejected` as given, and the service consuming from it, for one describe. */
function onTestBroker(rejected: 'redeliver' | 'dead-letter') {
  let parts: { broker: AmqpTestBroker; service: Service } | undefined;
  beforeAll(async () => {
    const broker = await startAmqpTestBroker({ rejected });
    const service = await startTestService({
      ...world.endpoints(),
      queueAddress: broker.address,
      env: { AMQP_URL: broker.url, MAX_DELIVERIES: String(MAX_DELIVERIES) },
    });
    parts = { broker, service };
  });
  afterAll(async () => {
    await parts?.service.stop();
    await parts?.broker.close();
  });
  const started = () => {
    if (parts === undefined) throw new Error('the broker starts in beforeAll');
    return parts;
  };
  return {
    broker: () => started().broker,
    service: () => started().service,
    settledForGood: () =>
      eventually('every message accepted or dead-lettered', async () => started().broker.isIdle()),
  };
}

describe.each(BROKERS)('over AMQP, when $name', ({ rejected, refused }) => {
  const on = onTestBroker(rejected);
  const recognised = refused.length - 1;
  const { settledForGood } = on;

  it('refuses a malformed message among three valid events once, with one dead letter, and applies the three', async () => {
    const orders = [newOrder(), newOrder(), newOrder()];
    const malformed = `{"specversion":"1.0","id":"malformed-${rejected}"`;
    const rejectedBefore = await eventsTotal(on.service().app, 'amqp', 'rejected', 'invalid_event');
    const [first, bad, ...rest] = on
      .broker()
      .publish([
        { body: salesOrderEvent({ salesOrder: orders[0] }) },
        { body: malformed },
        { body: salesOrderEvent({ salesOrder: orders[1] }) },
        { body: salesOrderEvent({ salesOrder: orders[2] }) },
      ]);
    await settledForGood();
    await eventually('a mail per valid event', async () =>
      orders.every((salesOrder) => view.mails(salesOrder).length === 1),
    );

    expect(bad?.settlements).toEqual(refused);
    expect(bad?.state).toBe(rejected === 'redeliver' ? 'accepted' : 'dead-lettered');
    for (const valid of [first, ...rest]) expect(valid?.settlements).toEqual(['accepted']);
    const letters = await lettersWithBody(malformed);
    expect(letters).toHaveLength(1);
    expect(letters[0]?.reason).toMatch(/^body is not valid JSON/);
    for (const salesOrder of orders) expect(world.s4.calls(salesOrder)).toBe(1);
    expect(await eventsTotal(on.service().app, 'amqp', 'rejected', 'invalid_event')).toBe(rejectedBefore + 1);
    expect(await eventsTotal(on.service().app, 'amqp', 'already_refused')).toBe(recognised);
  });

  it('refuses an event at its delivery limit once, and does not read S/4HANA for it again', async () => {
    const salesOrder = newOrder();
    const id = `limit-${rejected}`;
    await atDeliveryLimit(id);
    const [message] = on.broker().publish([{ body: salesOrderEvent({ salesOrder, id }) }]);
    await settledForGood();

    expect(message?.settlements).toEqual(refused);
    const letters = await lettersWithBody(salesOrderEvent({ salesOrder, id }));
    expect(letters.map((letter) => [letter.eventId, letter.reason])).toEqual([
      [id, expect.stringMatching(/^delivery limit reached: /)],
    ]);
    expect(world.s4.calls(salesOrder)).toBe(0);
    expect(await view.processed({ id })).toEqual([]);
    // Cleared with the refusal, and not counted again when recognised.
    const { rows } = await world.db.pool.query(`select 1 from event_attempt where id = $1::text`, [id]);
    expect(rows).toEqual([]);
  });

  it('refuses a conflicting payload once and changes nothing', async () => {
    const salesOrder = newOrder();
    const id = `conflict-${rejected}`;
    on.broker().publish([{ body: salesOrderEvent({ salesOrder, id }) }]);
    await settledForGood();
    const portal = await view.portalRow(salesOrder);
    const other = newOrder();
    const reads = world.s4.calls();
    const conflicting = salesOrderEvent({ salesOrder: other, id });
    const [message] = on.broker().publish([{ body: conflicting }]);
    await settledForGood();

    expect(message?.settlements).toEqual(refused);
    expect((await lettersWithBody(conflicting)).map((letter) => letter.reason)).toEqual([
      'conflict: this source and id were processed with a different payload',
    ]);
    expect(world.s4.calls()).toBe(reads);
    expect(await view.portalRow(salesOrder)).toEqual(portal);
    expect(await view.portalRow(other)).toBeUndefined();
  });

  it('keeps a dead letter for each of two messages of the same body under different ids, and applies the same bytes as a valid event', async () => {
    // Binary mode: the body is the data, whose SalesOrder is no key; the ids travel beside it.
    const data = '{"SalesOrder":"not a key!"}';
    const ids = [`same-body-a-${rejected}`, `same-body-b-${rejected}`];
    const binary = ids.map((id) => ({
      body: data,
      properties: {
        'cloudEvents:specversion': '1.0',
        'cloudEvents:id': id,
        'cloudEvents:source': S4_SOURCE,
        'cloudEvents:type': CHANGED,
      },
    }));
    // A structured event that an attribute beside it contradicts, and then the same bytes alone.
    const salesOrder = newOrder();
    const structured = salesOrderEvent({ salesOrder, id: `same-bytes-${rejected}` });
    const contentType = 'application/cloudevents+json';
    const published = on
      .broker()
      .publish([
        ...binary,
        { body: structured, contentType, properties: { 'cloudEvents:id': 'another-id' } },
      ]);
    await settledForGood();
    const [valid] = on.broker().publish([{ body: structured, contentType }]);
    await settledForGood();

    for (const message of published) expect(message.settlements).toEqual(refused);
    // The other broker's run of this test sent the same body under its own ids.
    const letters = (await lettersWithBody(data)).filter((letter) => ids.includes(letter.attributeId ?? ''));
    expect(letters.map((letter) => letter.attributeId).sort()).toEqual(ids);
    for (const letter of letters) expect(letter.reason).toMatch(/^data\.SalesOrder must be 1 to 10 letters/);
    expect((await lettersWithBody(structured)).map((letter) => letter.reason)).toEqual([
      'binary attribute "id" disagrees with the structured event',
    ]);
    expect(valid?.settlements).toEqual(['accepted']);
    expect((await view.processed({ id: `same-bytes-${rejected}` })).map((row) => row.outcome)).toEqual([
      'applied',
    ]);
  });
});

describe('a refused event replayed by an operator', () => {
  const on = onTestBroker('redeliver');

  it('is applied by the replay, and a later delivery of it is a duplicate', async () => {
    const salesOrder = newOrder();
    const id = 'replayed-1';
    const body = salesOrderEvent({ salesOrder, id });
    await atDeliveryLimit(id);
    const [refusedOnce] = on.broker().publish([{ body }]);
    await on.settledForGood();
    expect(refusedOnce?.settlements).toEqual(['rejected', 'accepted']);
    const [letter] = await lettersWithBody(body);

    const replay = await on.service().app.inject({
      method: 'POST',
      url: `/api/dead-letters/${letter?.id}/replay`,
    });
    expect(replay.json()).toMatchObject({ outcome: 'accept', result: 'applied' });
    await eventually('the mail', async () => view.mails(salesOrder).length === 1);
    expect((await lettersWithBody(body)).map((stored) => stored.replayedAt)).toEqual([expect.any(Date)]);

    const [again] = on.broker().publish([{ body }]);
    await on.settledForGood();
    expect(again?.settlements).toEqual(['accepted']);
    expect(await lettersWithBody(body)).toHaveLength(1);
    expect(world.s4.calls(salesOrder)).toBe(1);
    expect(view.mails(salesOrder)).toHaveLength(1);
  });
});

describe('over AMQP on the real RabbitMQ, where rejected goes to the dead-letter queue', () => {
  let queue: TestQueue;
  let service: Service;
  beforeAll(async () => {
    queue = await createTestQueue('fon-refused-once');
    service = await startTestService({ ...world.endpoints(), queueAddress: queue.address });
  });
  afterAll(async () => {
    await service?.stop();
    await queue?.delete();
  });

  it('refuses a malformed message among three valid events once: one row, one copy in the queue', async () => {
    const orders = [newOrder(), newOrder(), newOrder()];
    const malformed = '{"specversion":"1.0","id":"malformed-rabbitmq"';
    await world.publisher.send(queue.address, [
      { body: salesOrderEvent({ salesOrder: orders[0] }) },
      { body: malformed },
      { body: salesOrderEvent({ salesOrder: orders[1] }) },
      { body: salesOrderEvent({ salesOrder: orders[2] }) },
    ]);
    await eventually('a mail per valid event', async () =>
      orders.every((salesOrder) => view.mails(salesOrder).length === 1),
    );
    const copies = await eventually('the copy in the dead-letter queue', async () => {
      const drained = await queue.drainDeadLetters();
      return drained.length > 0 ? drained : undefined;
    });
    await eventually('nothing ready or in flight', () => queue.isIdle());

    expect(copies.map((copy) => copy.body)).toEqual([malformed]);
    expect(await lettersWithBody(malformed)).toHaveLength(1);
    expect(await eventsTotal(service.app, 'amqp', 'already_refused')).toBe(0);
  });
});

describe('over the webhook', () => {
  let service: ServiceParts;
  beforeAll(async () => {
    service = await buildTestService({
      ...world.endpoints(),
      env: { MAX_DELIVERIES: String(MAX_DELIVERIES) },
    });
  });
  afterAll(() => service?.stop());

  const post = (payload: string) =>
    service.app.inject({
      method: 'POST',
      url: '/events',
      headers: { 'content-type': 'application/cloudevents+json' },
      payload,
    });

  it('answers a refused message sent again 202 already-refused and stores no second dead letter', async () => {
    const malformed = '{"specversion":"1.0","id":"malformed-webhook"';
    const first = await post(malformed);
    const again = await post(malformed);

    expect(first.statusCode).toBe(202);
    expect(first.json()).toMatchObject({ status: 'dead-lettered', deadLetterId: expect.any(String) });
    expect(again.statusCode).toBe(202);
    expect(again.json()).toEqual({ status: 'already-refused' });
    expect((await lettersWithBody(malformed)).map((letter) => letter.id)).toEqual([
      first.json().deadLetterId,
    ]);
    expect(await eventsTotal(service.app, 'webhook', 'already_refused')).toBe(1);
  });

  it('answers an event at its delivery limit sent again 202 already-refused without reading S/4HANA', async () => {
    const salesOrder = newOrder();
    const id = 'limit-webhook';
    await atDeliveryLimit(id);
    const event = salesOrderEvent({ salesOrder, id });
    const first = await post(event);
    const again = await post(event);

    expect(first.json()).toMatchObject({
      status: 'dead-lettered',
      reason: expect.stringMatching(/^delivery limit/),
    });
    expect(again.json()).toEqual({ status: 'already-refused' });
    expect(await lettersWithBody(event)).toHaveLength(1);
    expect(world.s4.calls(salesOrder)).toBe(0);
  });
});

describe('two deliveries of one message refused at once', () => {
  const logger = guardedLogger();
  const letterOf = (
    body: string,
    event?: { source: string; id: string; payloadHash: string },
  ): DeadLetter => ({
    channel: 'amqp',
    reason: 'refused in a test',
    source: event?.source,
    eventId: event?.id,
    payloadHash: event?.payloadHash,
    contentType: 'application/json',
    attributes: {},
    headers: {},
    body: Buffer.from(body),
  });

  /** Sessions of this database waiting for a lock: the refusal under test reached the other's letter. */
  async function waitingOnLocks(count: number): Promise<void> {
    await eventually(`${count} session(s) waiting for a lock`, async () => {
      const { rows } = await world.db.pool.query<{ n: number }>(
        `select count(*)::int as "n" from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`,
      );
      return rows[0]?.n === count;
    });
  }

  const messages = [
    { kind: 'a message that is no event', letter: () => letterOf('{"not":"an event"') },
    {
      kind: 'an event',
      letter: () =>
        letterOf('{}', { source: S4_SOURCE, id: 'refused-at-once', payloadHash: 'm1:refused-at-once' }),
    },
  ];

  describe('through the handler', () => {
    const lines: string[] = [];
    let service: ServiceParts;
    beforeAll(async () => {
      service = await buildTestService({ ...world.endpoints(), env: { LOG_LEVEL: 'info' }, logLines: lines });
    });
    afterAll(() => service?.stop());

    it('counts and logs the second as already_refused, the outcome it is settled with, not as rejected', async () => {
      const body = '{"not":"an event, refused twice at once"';
      const other = new pg.Client({ connectionString: world.db.url });
      await other.connect();
      try {
        await other.query('begin');
        await recordDeadLetter(other, letterOf(body));
        const rejectedBefore = await eventsTotal(service.app, 'amqp', 'rejected', 'invalid_event');
        const refusedBefore = await eventsTotal(service.app, 'amqp', 'already_refused');
        const second = service.handle(
          { body: Buffer.from(body), contentType: 'application/json', binaryAttributes: {} },
          { channel: 'amqp' },
        );
        await waitingOnLocks(1);
        await other.query('commit');

        const handled = await second;
        expect(handled.outcome).toEqual({ kind: 'accept', result: 'already_refused' });
        expect(await eventsTotal(service.app, 'amqp', 'already_refused')).toBe(refusedBefore + 1);
        expect(await eventsTotal(service.app, 'amqp', 'rejected', 'invalid_event')).toBe(rejectedBefore);
        const said = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
        expect(said).toContain('message refused before arrived again; taken, its dead letter stands');
        expect(said).not.toContain('event rejected');
        expect(await lettersWithBody(body)).toHaveLength(1);
      } finally {
        await world.db.pool.query(`delete from dead_letter where reason = 'refused in a test'`);
        await other.end();
      }
    });
  });

  describe.each(messages)('for $kind', ({ letter }) => {
    it('stores one letter: the second waits for the first and, once it commits, takes the message as refused before', async () => {
      const other = new pg.Client({ connectionString: world.db.url });
      await other.connect();
      try {
        await other.query('begin');
        const first = await recordDeadLetter(other, letter());
        let finished = false;
        const second = refuse(world.db.pool, letter(), logger).finally(() => {
          finished = true;
        });
        await waitingOnLocks(1);
        expect(finished).toBe(false);
        await other.query('commit');

        expect(await second).toEqual({ kind: 'already_refused', deadLetterId: first.id });
        const { rows } = await world.db.pool.query(
          `select 1 from dead_letter where reason = 'refused in a test'`,
        );
        expect(rows).toHaveLength(1);
      } finally {
        await world.db.pool.query(`delete from dead_letter where reason = 'refused in a test'`);
        await other.end();
      }
    });

    it('stores its own letter when the first rolls back', async () => {
      const other = new pg.Client({ connectionString: world.db.url });
      await other.connect();
      try {
        await other.query('begin');
        await recordDeadLetter(other, letter());
        const second = refuse(world.db.pool, letter(), logger);
        await waitingOnLocks(1);
        await other.query('rollback');

        const refusal = await second;
        expect(refusal).toEqual({ kind: 'refused', deadLetterId: expect.any(String) });
        const { rows } = await world.db.pool.query<{ id: string }>(
          `select id::text as "id" from dead_letter where reason = 'refused in a test'`,
        );
        expect(rows).toEqual([{ id: refusal.kind === 'refused' ? refusal.deadLetterId : 'none' }]);
      } finally {
        await world.db.pool.query(`delete from dead_letter where reason = 'refused in a test'`);
        await other.end();
      }
    });
  });
});
