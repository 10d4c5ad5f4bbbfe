// GET /api/orders/{salesOrder}/timeline on the real PostgreSQL with real XSUAA token validation: one order's
// stream of events through the real handler produces every outcome (applied, a duplicate, stale, not found,
// released, dead-lettered), its emails go to an SMTP sink (one parked and retried) and its state to the portal
// stand-in; the timeline must tell each of them, in arrival order, from what the service recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalServer, startPortalServer } from '../../sandbox/portalServer.js';
import { SALES_ORDER_TYPE, salesOrderEvent } from '../../sandbox/s4Events.js';
import { parseCloudEvent } from '../../src/events/cloudEvent.js';
import { checkInbox } from '../../src/events/inbox.js';
import type { Channel } from '../../src/events/outcome.js';
import type { ServiceParts } from '../../src/service/buildService.js';
import { adminCalls } from '../support/adminCalls.js';
import { registerDestination } from '../support/destination.js';
import { buildTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';
import { startXsuaaStub, type XsuaaStub, xsuaaEnv } from '../support/xsuaa.js';

const world = useWorld();
let stub: XsuaaStub;
let portal: PortalServer;
let service: ServiceParts;

beforeAll(async () => {
  stub = await startXsuaaStub();
  portal = await startPortalServer();
  service = await buildTestService({
    ...world.endpoints(),
    env: { ...xsuaaEnv(stub), PORTAL_DESTINATION: registerDestination(portal.url) },
    // One try per delivery: an S/4HANA outage releases the message at once.
    retryPolicy: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    mailPollMs: 50,
  });
  service.mailSender.start();
  service.portalSender?.start();
});

afterAll(async () => {
  await service.stop();
  await portal.close();
  await stub.close();
});

const { viewer, admin, call } = adminCalls(
  () => service.app,
  () => stub,
);

const { newOrder, changeOrder } = orderMaker(() => world.s4, 8_100_000);

const inboundOf = (body: string) => ({
  body: Buffer.from(body),
  contentType: 'application/json',
  binaryAttributes: {},
});

/** Delivers an event as a transport adapter does: a reject is stored as a dead letter. */
async function deliver(body: string, channel: Channel = 'amqp') {
  const handled = await service.handle(inboundOf(body), { channel });
  // The handler stores a reject as a dead letter: only a letter the database refuses has no id.
  if (handled.outcome.kind === 'reject') expect(handled.deadLetterId).toEqual(expect.any(String));
  return handled.outcome;
}

const event = (salesOrder: string, id: string, variant = 'Changed.v1') =>
  salesOrderEvent({ salesOrder, id, type: `${SALES_ORDER_TYPE}${variant}` });

interface Arrival {
  id: string | null;
  channel: string | null;
  outcome: string;
  attempts: number | null;
  reason: string | null;
  read: {
    portalStatus: string;
    requestedDeliveryDate: string | null;
    lastChangeDateTime: string | null;
  } | null;
  notification: { realChange: boolean; decision: string; reason: string } | null;
  deadLetterId: string | null;
}

describe('the order timeline', () => {
  it('tells every arrival of an order in arrival order, with each read, notification decision, email and push', async () => {
    const salesOrder = newOrder({ lastChangeDateTime: '2026-11-30T10:00:00Z' });
    const id = (n: number) => `timeline-${salesOrder}-${n}`;

    expect(await deliver(event(salesOrder, id(1), 'Created.v1'))).toEqual({
      kind: 'accept',
      result: 'applied',
    });
    expect(await deliver(event(salesOrder, id(1), 'Created.v1'), 'webhook')).toMatchObject({
      result: 'duplicate',
    });
    // The first email goes out before the next change is queued, so the order of the sends is known.
    await world.smtp.waitForCount(1);

    changeOrder(salesOrder, {
      requestedDeliveryDate: '2027-01-12',
      lastChangeDateTime: '2026-12-01T09:00:00Z',
    });
    world.smtp.setRefuse(() => 'permanent');
    expect(await deliver(event(salesOrder, id(2)))).toMatchObject({ result: 'applied' });
    const parked = await eventually('the second email to be parked', async () => {
      const { rows } = await world.db.pool.query<{ id: string }>(
        `select id::text as "id" from mail_outbox where sales_order = $1 and state = 'parked'`,
        [salesOrder],
      );
      return rows[0]?.id;
    });
    world.smtp.setRefuse(undefined);

    // An item event for the same state: applied, but no real change.
    expect(await deliver(event(salesOrder, id(3), 'ItemChanged.v1'))).toMatchObject({ result: 'applied' });

    // A lagging read still shows the state before the change.
    const current = world.s4.getOrder(salesOrder);
    changeOrder(salesOrder, {
      requestedDeliveryDate: '2026-12-15',
      lastChangeDateTime: '2026-11-30T10:00:00Z',
    });
    expect(await deliver(event(salesOrder, id(4)))).toMatchObject({ result: 'stale' });
    if (current !== undefined) world.s4.setOrder(current);

    // S/4HANA unavailable: released, then applied on redelivery; a second one is still waiting.
    world.s4.setFault(() => 'unavailable');
    expect(await deliver(event(salesOrder, id(5)))).toMatchObject({ kind: 'release' });
    world.s4.setFault(undefined);
    expect(await deliver(event(salesOrder, id(5)))).toMatchObject({ result: 'applied' });

    // The same identity with another payload: refused for good.
    expect(await deliver(event(salesOrder, id(2), 'Created.v1'))).toMatchObject({
      kind: 'reject',
      code: 'conflict',
    });

    world.s4.setFault(() => 'unavailable');
    expect(await deliver(event(salesOrder, id(6)))).toMatchObject({ kind: 'release' });
    world.s4.setFault(undefined);

    const retried = await call('POST', `/api/mail/${parked}/retry`, admin());
    expect(retried.statusCode).toBe(200);
    await world.smtp.waitForCount(2);
    await eventually('the resent email to be sent and the push to be done', async () => {
      const { rows } = await world.db.pool.query(
        `select 1 from mail_outbox where sales_order = $1 and state = 'sent' and retried_at is not null
         union all select 1 from portal_push where sales_order = $1 and state = 'done'`,
        [salesOrder],
      );
      return rows.length === 2;
    });

    world.s4.deleteOrder(salesOrder);
    expect(await deliver(event(salesOrder, id(7), 'Deleted.v1'))).toMatchObject({ result: 'not_found' });

    // Counted, then nothing more: a delivery in process, or one whose process died.
    const counted = parseCloudEvent(inboundOf(event(salesOrder, id(8))), 1_000_000);
    if (!counted.ok) throw new Error(counted.reason);
    await checkInbox(world.db.pool, counted.event, 'amqp');

    const res = await call('GET', `/api/orders/${salesOrder}/timeline`, viewer());
    expect(res.statusCode).toBe(200);
    const timeline = res.json();
    const arrivals = timeline.arrivals as Arrival[];
    expect(arrivals.map((a) => [a.id, a.outcome])).toEqual([
      [id(1), 'applied'],
      [id(1), 'duplicate'],
      [id(2), 'applied'],
      [id(3), 'applied'],
      [id(4), 'stale'],
      [id(5), 'applied'],
      [id(2), 'dead_lettered'],
      [id(6), 'released'],
      [id(7), 'not_found'],
      [id(8), 'in_progress'],
    ]);
    const [created, duplicate, changed, item, stale, redelivered, conflict, waiting, gone] = arrivals as [
      Arrival,
      Arrival,
      Arrival,
      Arrival,
      Arrival,
      Arrival,
      Arrival,
      Arrival,
      Arrival,
      Arrival,
    ];
    expect(created).toMatchObject({
      channel: 'amqp',
      attempts: 1,
      read: {
        portalStatus: 'Open',
        requestedDeliveryDate: '2026-12-15',
        lastChangeDateTime: '2026-11-30T10:00:00.000Z',
      },
      notification: { realChange: true, decision: 'new' },
    });
    expect(duplicate.channel).toBe('webhook');
    expect(changed).toMatchObject({
      read: { requestedDeliveryDate: '2027-01-12', lastChangeDateTime: '2026-12-01T09:00:00.000Z' },
      notification: { realChange: true, decision: 'changed' },
    });
    expect(item.notification).toMatchObject({ realChange: false, decision: 'unchanged' });
    expect(stale).toMatchObject({
      read: { requestedDeliveryDate: '2026-12-15' },
      notification: { realChange: false, decision: 'stale' },
    });
    expect(redelivered.attempts).toBe(2);
    expect(redelivered.reason).toMatch(/503|unavailable/i);
    expect(conflict.reason).toMatch(/^conflict: /);
    expect(conflict.deadLetterId).toMatch(/^\d+$/);
    expect(waiting).toMatchObject({ attempts: 1 });
    expect(waiting.reason).toMatch(/503|unavailable/i);
    expect(gone).toMatchObject({ read: null, notification: null });

    const emails = timeline.emails as Array<{
      mailId: string;
      step: string;
      messageId: string;
      reason: string;
    }>;
    const sentIds = world.smtp.messages.map((mail) => mail.messageId);
    expect(emails.map((e) => e.step)).toEqual(['queued', 'sent', 'queued', 'parked', 'resent', 'sent']);
    const [, firstSent, , parkedStep, , resent] = emails as [
      unknown,
      { messageId: string },
      unknown,
      { mailId: string; reason: string },
      unknown,
      { messageId: string; mailId: string },
    ];
    expect(sentIds).toEqual([firstSent.messageId, resent.messageId]);
    expect(parkedStep.mailId).toBe(parked);
    expect(parkedStep.reason).toMatch(/5\d\d/);
    expect(timeline.portalPush).toMatchObject({
      state: 'done',
      step: 'pushed',
      requestedDeliveryDate: '2027-01-12',
    });

    // The Viewer sees no recipient address.
    expect(res.body).not.toContain('fleet-manager@fleet.example');
  });

  it('answers 404 for an order nothing is known of, and 401 without a token', async () => {
    expect((await call('GET', '/api/orders/8199999/timeline', viewer())).statusCode).toBe(404);
    expect((await call('GET', '/api/orders/8199999/timeline')).statusCode).toBe(401);
  });

  it('tells the caller which of Viewer and Admin its token grants', async () => {
    expect((await call('GET', '/api/me', viewer())).json()).toEqual({ scopes: ['Viewer'] });
    expect((await call('GET', '/api/me', admin())).json()).toEqual({ scopes: ['Viewer', 'Admin'] });
    expect((await call('GET', '/api/me')).statusCode).toBe(401);
  });
});
