// GET /api/orders/{salesOrder}/timeline and GET /api/returns/{customerReturn}/timeline on the real PostgreSQL
// with real XSUAA token validation: one order's (one return's) stream of events through the real handler
// produces every outcome (applied, a duplicate, stale, not found or not a warranty case, released,
// dead-lettered), its emails go to an SMTP sink (one parked and retried) and its state to the portal stand-in;
// the timeline must tell each of them, in arrival order, from what the service recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalServer, startPortalServer } from '../../sandbox/portalServer.js';
import { customerReturnEvent, SALES_ORDER_TYPE, salesOrderEvent } from '../../sandbox/s4Events.js';
import { parseCloudEvent } from '../../src/events/cloudEvent.js';
import { checkInbox } from '../../src/events/inbox.js';
import type { Channel } from '../../src/events/outcome.js';
import { EVENT_KEYS } from '../../src/families/index.js';
import type { ServiceParts } from '../../src/service/buildService.js';
import { adminCalls } from '../support/adminCalls.js';
import { registerDestination } from '../support/destination.js';
import { buildTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { returnState } from '../support/returns.js';
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
    env: {
      ...xsuaaEnv(stub),
      PORTAL_DESTINATION: registerDestination(portal.url),
      WARRANTY_RETURN_REASONS: '103',
      // Reconciliation runs only when asked (POST /api/reconcile/runs).
      S4_SOURCE: '/default/sap.s4.beh/S4HCLNT100',
      RECONCILE_INTERVAL: 'off',
    },
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

/** Delivers an event that is applied while the SMTP sink refuses for good: the id of the email it parks. */
async function appliedWithMailParked(
  body: string,
  family: 'salesOrder' | 'customerReturn',
  key: string,
): Promise<string> {
  world.smtp.setRefuse(() => 'permanent');
  expect(await deliver(body)).toMatchObject({ result: 'applied' });
  const parked = await eventually(`the email of ${key} to be parked`, async () => {
    const { rows } = await world.db.pool.query<{ id: string }>(
      `select id::text as "id" from mail_outbox where family = $1 and key = $2 and state = 'parked'`,
      [family, key],
    );
    return rows[0]?.id;
  });
  world.smtp.setRefuse(undefined);
  return parked;
}

/** Retries the parked email as an Admin and waits until it is resent and the push is done. */
async function retriedAndPushed(parked: string, family: 'salesOrder' | 'customerReturn', key: string) {
  expect((await call('POST', `/api/mail/${parked}/retry`, admin())).statusCode).toBe(200);
  await eventually('the resent email to be sent and the push to be done', async () => {
    const { rows } = await world.db.pool.query(
      `select 1 from mail_outbox where family = $1 and key = $2 and state = 'sent' and retried_at is not null
       union all select 1 from portal_push where family = $1 and key = $2 and state = 'done'`,
      [family, key],
    );
    return rows.length === 2;
  });
}

/** What both families' streams show alike: a duplicate by webhook, a redelivery, a conflict, one still waiting. */
function expectDeliveries(
  a: Record<'duplicate' | 'redelivered' | 'conflict' | 'waiting', Omit<Arrival, 'read'>>,
) {
  expect(a.duplicate.channel).toBe('webhook');
  expect(a.redelivered.attempts).toBe(2);
  expect(a.redelivered.reason).toMatch(/503|unavailable/i);
  expect(a.conflict.reason).toMatch(/^conflict: /);
  expect(a.conflict.deadLetterId).toMatch(/^\d+$/);
  expect(a.waiting).toMatchObject({ attempts: 1 });
  expect(a.waiting.reason).toMatch(/503|unavailable/i);
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
    const parked = await appliedWithMailParked(event(salesOrder, id(2)), 'salesOrder', salesOrder);

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

    await retriedAndPushed(parked, 'salesOrder', salesOrder);
    await world.smtp.waitForCount(2);

    world.s4.deleteOrder(salesOrder);
    expect(await deliver(event(salesOrder, id(7), 'Deleted.v1'))).toMatchObject({ result: 'not_found' });

    // Counted, then nothing more: a delivery in process, or one whose process died.
    const counted = parseCloudEvent(inboundOf(event(salesOrder, id(8))), 1_000_000, EVENT_KEYS);
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
    expect(changed).toMatchObject({
      read: { requestedDeliveryDate: '2027-01-12', lastChangeDateTime: '2026-12-01T09:00:00.000Z' },
      notification: { realChange: true, decision: 'changed' },
    });
    expect(item.notification).toMatchObject({ realChange: false, decision: 'unchanged' });
    expect(stale).toMatchObject({
      read: { requestedDeliveryDate: '2026-12-15' },
      notification: { realChange: false, decision: 'stale' },
    });
    expectDeliveries({ duplicate, redelivered, conflict, waiting });
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

interface ReturnArrival extends Omit<Arrival, 'read'> {
  read: { caseStatus: string; lastChangeDateTime: string | null } | null;
}

describe('the return timeline', () => {
  const customerReturn = '60081001';
  const id = (n: number) => `return-timeline-${customerReturn}-${n}`;
  const returnEvent = (n: number, change = 'Changed') =>
    customerReturnEvent(customerReturn, change, { id: id(n) });
  const setReturn = (status: string, at: string, reason = '103') =>
    world.s4.returns.setReturn(
      returnState(customerReturn, {
        overallSDProcessStatus: status,
        lastChangeDateTime: at,
        orderReason: '001',
        items: [{ customerReturnItem: '10', returnReason: reason }],
      }),
    );

  it('tells every arrival of a return in arrival order, with each read, notification decision, email and push', async () => {
    const mailed = world.smtp.messages.length;
    // Not a warranty case while no return reason is one that WARRANTY_RETURN_REASONS lists.
    setReturn('A', '2026-11-30T09:00:00Z', '001');
    expect(await deliver(returnEvent(1, 'Created'))).toMatchObject({ result: 'not_warranty_case' });

    setReturn('A', '2026-11-30T10:00:00Z');
    expect(await deliver(returnEvent(2))).toMatchObject({ result: 'applied' });
    expect(await deliver(returnEvent(2), 'webhook')).toMatchObject({ result: 'duplicate' });
    await world.smtp.waitForCount(mailed + 1);

    setReturn('B', '2026-12-01T09:00:00Z');
    const parked = await appliedWithMailParked(returnEvent(3), 'customerReturn', customerReturn);

    // The same status again: applied, no real change.
    setReturn('B', '2026-12-01T10:00:00Z');
    expect(await deliver(returnEvent(4, 'ItemChanged'))).toMatchObject({ result: 'applied' });

    // A lagging read: older than the case held.
    setReturn('A', '2026-11-30T10:00:00Z');
    expect(await deliver(returnEvent(5))).toMatchObject({ result: 'stale' });
    setReturn('B', '2026-12-01T10:00:00Z');

    world.s4.returns.setFault(() => 'unavailable');
    expect(await deliver(returnEvent(6))).toMatchObject({ kind: 'release' });
    world.s4.returns.setFault(undefined);
    expect(await deliver(returnEvent(6))).toMatchObject({ result: 'applied' });

    // The same identity with another payload: refused for good.
    expect(await deliver(returnEvent(3, 'Created'))).toMatchObject({ kind: 'reject', code: 'conflict' });

    world.s4.returns.setFault(() => 'unavailable');
    expect(await deliver(returnEvent(7))).toMatchObject({ kind: 'release' });
    world.s4.returns.setFault(undefined);

    await retriedAndPushed(parked, 'customerReturn', customerReturn);

    const counted = parseCloudEvent(inboundOf(returnEvent(8)), 1_000_000, EVENT_KEYS);
    if (!counted.ok) throw new Error(counted.reason);
    await checkInbox(world.db.pool, counted.event, 'amqp');

    // Leading zeros name the same return.
    const res = await call('GET', `/api/returns/00${customerReturn}/timeline`, viewer());
    expect(res.statusCode).toBe(200);
    const story = res.json();
    expect(story.customerReturn).toBe(customerReturn);
    const arrivals = story.arrivals as ReturnArrival[];
    expect(arrivals.map((a) => [a.id, a.outcome])).toEqual([
      [id(1), 'not_warranty_case'],
      [id(2), 'applied'],
      [id(2), 'duplicate'],
      [id(3), 'applied'],
      [id(4), 'applied'],
      [id(5), 'stale'],
      [id(6), 'applied'],
      [id(3), 'dead_lettered'],
      [id(7), 'released'],
      [id(8), 'in_progress'],
    ]);
    const [notCase, created, duplicate, changed, item, stale, redelivered, conflict, waiting] =
      arrivals as ReturnArrival[] as [
        ReturnArrival,
        ReturnArrival,
        ReturnArrival,
        ReturnArrival,
        ReturnArrival,
        ReturnArrival,
        ReturnArrival,
        ReturnArrival,
        ReturnArrival,
      ];
    expect(notCase).toMatchObject({ read: { caseStatus: 'Open' }, notification: null });
    expect(created).toMatchObject({
      channel: 'amqp',
      attempts: 1,
      read: { caseStatus: 'Open', lastChangeDateTime: '2026-11-30T10:00:00.000Z' },
      notification: { realChange: true, decision: 'new' },
    });
    expect(changed).toMatchObject({
      read: { caseStatus: 'InProcess', lastChangeDateTime: '2026-12-01T09:00:00.000Z' },
      notification: { realChange: true, decision: 'changed', reason: expect.stringMatching(/case status/) },
    });
    expect(item.notification).toMatchObject({ realChange: false, decision: 'unchanged' });
    expect(stale).toMatchObject({
      read: { caseStatus: 'Open' },
      notification: { realChange: false, decision: 'stale' },
    });
    expectDeliveries({ duplicate, redelivered, conflict, waiting });

    const emails = story.emails as Array<{
      mailId: string;
      step: string;
      caseStatus: string;
      reason: string;
    }>;
    expect(emails.map((e) => [e.step, e.caseStatus])).toEqual([
      ['queued', 'Open'],
      ['sent', 'Open'],
      ['queued', 'InProcess'],
      ['parked', 'InProcess'],
      ['resent', 'InProcess'],
      ['sent', 'InProcess'],
    ]);
    expect(emails[3]).toMatchObject({ mailId: parked, reason: expect.stringMatching(/5\d\d/) });
    expect(story.portalPush).toMatchObject({ state: 'done', step: 'pushed', caseStatus: 'InProcess' });
    expect(res.body).not.toContain('fleet-manager@fleet.example');
  });

  it('answers 404 for a return nothing is known of, and 401 without a token', async () => {
    expect((await call('GET', '/api/returns/60089999/timeline', viewer())).statusCode).toBe(404);
    expect((await call('GET', '/api/returns/60089999/timeline')).statusCode).toBe(401);
  });
});

describe('an arrival found by reconciliation', () => {
  /** Starts a run of sales orders as an Admin and waits until it is done. */
  async function reconciled(mode: 'baseline' | 'delta'): Promise<string> {
    const started = await service.app.inject({
      method: 'POST',
      url: '/api/reconcile/runs',
      headers: { authorization: `Bearer ${admin()}` },
      payload: { family: 'salesOrder', mode },
    });
    expect(started.statusCode).toBe(202);
    const [id] = (started.json() as { runs: string[] }).runs as [string];
    await eventually(`run ${id} to be done`, async () => {
      const listed = (await call('GET', '/api/reconcile/runs', viewer())).json() as {
        runs: Array<{ id: string; status: string }>;
      };
      return listed.runs.find((run) => run.id === id)?.status === 'done';
    });
    return id;
  }

  it('names the run, its window and the S/4HANA stamp, and shows the late event after it as not a change', async () => {
    const salesOrder = newOrder({ lastChangeDateTime: new Date(Date.now() - 3_600_000).toISOString() });
    await reconciled('baseline');
    // Its event dropped: only reconciliation sees the change.
    const changedAt = new Date(Date.now() - 60_000).toISOString();
    changeOrder(salesOrder, {
      overallSDProcessStatus: 'B',
      overallDeliveryStatus: 'B',
      lastChangeDateTime: changedAt,
    });
    const run = await reconciled('delta');
    expect(await deliver(event(salesOrder, `timeline-${salesOrder}-late`))).toMatchObject({ kind: 'accept' });

    const story = (await call('GET', `/api/orders/${salesOrder}/timeline`, viewer())).json() as {
      arrivals: Array<Arrival & { run?: Record<string, unknown>; stamp?: string }>;
    };
    const [baseline, repair, late] = story.arrivals;
    expect(baseline).toMatchObject({ channel: 'reconcile', run: { mode: 'baseline', windowFrom: null } });
    expect(repair).toMatchObject({
      channel: 'reconcile',
      outcome: 'applied',
      run: { id: run, mode: 'delta', windowFrom: expect.any(String), windowTo: expect.any(String) },
      stamp: changedAt.replace('Z', '0000Z'),
      read: { portalStatus: 'PartiallyDelivered' },
      notification: { realChange: true, decision: 'changed' },
    });
    expect(late).toMatchObject({ id: `timeline-${salesOrder}-late`, channel: 'amqp' });
    expect(late).not.toHaveProperty('run');
    expect(['stale', 'unchanged']).toContain(late?.notification?.decision);
  });
});
