// The operators' console in headless Chromium against the real service: the demo's story pushed to its webhook
// (real PostgreSQL, real XSUAA-style signed tokens, mail to an SMTP sink, the portal stand-in), then the pages
// read and used as an operator would. The page gets its operator's user token as behind the approuter: added to
// its /api requests, never in a URL. A screenshot of each page is kept in test-artifacts/.
import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPECTED, INITIAL_ORDERS, RECIPIENTS, STORY } from '../../demo/story.js';
import { type PortalServer, startPortalServer } from '../../sandbox/portalServer.js';
import { customerReturnEvent, SALES_ORDER_TYPE, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { Service } from '../../src/service/buildService.js';
import { type Browser, launchBrowser, requestedOutside, watchedConsolePage } from '../support/browser.js';
import { registerDestination } from '../support/destination.js';
import { startTestService } from '../support/harness.js';
import { ANN, BEN } from '../support/operators.js';
import { addRecipients } from '../support/recipients.js';
import { returnState } from '../support/returns.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';
import { startXsuaaStub, type XsuaaStub, xsuaaEnv } from '../support/xsuaa.js';

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);
/** An order outside the story, whose event is dead-lettered at the delivery limit and then replayed. */
const REPLAYED_ORDER = '1000478';

const world = useWorld();
let stub: XsuaaStub;
let portal: PortalServer;
let service: Service;
let browser: Browser;
let page: Page;
/** The bearer token the page's /api requests carry, as the approuter would add it; none when undefined. */
let token: string | undefined;
let cspViolations: string[];
/** Every URL the page requested: the console's own files and the admin API, nothing else. */
let requested: Set<string>;

async function push(headers: Record<string, string>, body: string): Promise<Response> {
  return fetch(`${service.url}/events`, {
    method: 'POST',
    headers: { ...headers, authorization: `Bearer ${stub.token({ scopes: ['EventSubmit'] })}` },
    body,
  });
}

beforeAll(async () => {
  stub = await startXsuaaStub();
  portal = await startPortalServer();
  service = await startTestService({
    ...world.endpoints(),
    env: { ...xsuaaEnv(stub), PORTAL_DESTINATION: registerDestination(portal.url), MAX_DELIVERIES: '2' },
    retryPolicy: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    mailPollMs: 50,
  });
  for (const order of INITIAL_ORDERS) world.s4.setOrder(order);
  await addRecipients(world.db.pool, ...RECIPIENTS);

  // The demo's story, as Event Mesh pushes it (without waiting out Retry-After: S/4HANA is back at once).
  const answers: number[] = [];
  for (const step of STORY) {
    step.s4?.(world.s4);
    answers.push((await push(step.delivery.headers, step.delivery.body)).status);
    step.s4After?.(world.s4);
  }
  expect(answers).toEqual(
    STORY.map((step) => ({ 'retry-later': 503, 'dead-lettered': 202 })[step.answer as string] ?? 200),
  );

  // Past the delivery limit while S/4HANA is down: dead-lettered; S/4HANA is back for the replay.
  world.s4.setOrder({
    ...(INITIAL_ORDERS[0] as (typeof INITIAL_ORDERS)[number]),
    salesOrder: REPLAYED_ORDER,
  });
  world.s4.setFault((salesOrder) => (salesOrder === REPLAYED_ORDER ? 'unavailable' : 'ok'));
  const limited = salesOrderEvent({ salesOrder: REPLAYED_ORDER, id: `console-${REPLAYED_ORDER}` });
  const limitAnswers = [];
  for (let i = 0; i < 3; i++)
    limitAnswers.push((await push({ 'content-type': 'application/json' }, limited)).status);
  expect(limitAnswers).toEqual([503, 503, 202]);
  world.s4.setFault(undefined);

  // The rental cars' customer refuses mail for good: that email is parked.
  await eventually(
    "the story's emails to be sent",
    async () => world.smtp.messages.length === EXPECTED.emails.length,
  );
  world.smtp.setRefuse(() => 'permanent');
  const rental = INITIAL_ORDERS.find((order) => order.salesOrder === '1000477');
  world.s4.setOrder({
    ...(rental as (typeof INITIAL_ORDERS)[number]),
    requestedDeliveryDate: '2027-03-01',
    lastChangeDateTime: '2026-11-29T10:00:00Z',
  });
  const changed = salesOrderEvent({
    salesOrder: '1000477',
    id: 'console-rental-moved',
    type: `${SALES_ORDER_TYPE}Changed.v1`,
  });
  expect((await push({ 'content-type': 'application/json' }, changed)).status).toBe(200);
  await eventually('the email to be parked', async () => {
    const { rowCount } = await world.db.pool.query(`select from mail_outbox where state = 'parked'`);
    return rowCount === 1;
  });
  world.smtp.setRefuse(undefined);

  await mkdir(ARTIFACTS, { recursive: true });
  browser = await launchBrowser();
  ({ page, requested, cspViolations } = await watchedConsolePage(browser, service.url, () => token));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await portal?.close();
  await stub?.close();
});

// Operators' own tokens, as the approuter forwards them after their logon: their logon names are email addresses,
// which the log guard watches on every line the service writes.
const asAdmin = () => {
  token = stub.token({ scopes: ['Viewer', 'Admin'], user: ANN });
};
const asViewer = () => {
  token = stub.token({ scopes: ['Viewer'], user: BEN });
};

/** Opens a console page by its hash (keys only) on a fresh load, so /api/me is asked again. */
async function open(hash: string): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${service.url}/console/${hash}`);
}

/** Kept in test-artifacts/; first, the page must show no value the console failed to render. */
async function screenshot(name: string): Promise<void> {
  expect(await page.locator('main').textContent()).not.toMatch(/\b(null|undefined|NaN)\b|\[object /);
  await page.screenshot({ path: new URL(`console-${name}.png`, ARTIFACTS).pathname, fullPage: true });
}

/** The story's entries as `tag: title` lines, once the timeline has rendered. */
async function story(): Promise<string[]> {
  await page.locator('ol.story li').first().waitFor();
  return page
    .locator('ol.story li')
    .evaluateAll((items) =>
      items.map((item) => `${item.getAttribute('data-tag')}: ${item.textContent ?? ''}`),
    );
}

/** An order and a warranty-case return that refers to it, both known to S/4HANA. */
async function orderAndReturn(order: string, customerReturn: string) {
  world.s4.setOrder({ ...(INITIAL_ORDERS[0] as (typeof INITIAL_ORDERS)[number]), salesOrder: order });
  world.s4.returns.setReturn(returnState(customerReturn, { referenceSDDocument: order }));
  return { order, customerReturn };
}

/** An event of each, by webhook: applied, each queueing its email and its portal push. */
async function deliverBoth(order: string, customerReturn: string): Promise<void> {
  const events = [
    salesOrderEvent({ salesOrder: order, id: `console-${order}` }),
    customerReturnEvent(customerReturn, 'Created', { id: `console-${customerReturn}` }),
  ];
  for (const body of events)
    expect((await push({ 'content-type': 'application/json' }, body)).status).toBe(200);
}

type Outbox = 'mail_outbox' | 'portal_push';

async function stateOf(outbox: Outbox, family: string, key: string): Promise<string | undefined> {
  const { rows } = await world.db.pool.query<{ state: string }>(
    `select state from ${outbox} where family = $1 and key = $2`,
    [family, key],
  );
  return rows[0]?.state;
}

/** Waits until the order's row and the return's row of `outbox` are parked: their Message-IDs and push ids. */
async function parkedRows(outbox: Outbox, order: string, customerReturn: string) {
  return eventually(`the rows of ${order} and ${customerReturn} to be parked`, async () => {
    const { rows } = await world.db.pool.query<{ family: string; messageId: string; pushId: string }>(
      `select family, ${outbox === 'mail_outbox' ? 'message_id' : 'null'} as "messageId",
              ${outbox === 'portal_push' ? 'push_id::text' : 'null'} as "pushId"
       from ${outbox}
       where state = 'parked' and ((family = 'salesOrder' and key = $1) or (family = 'customerReturn' and key = $2))`,
      [order, customerReturn],
    );
    const of = (family: string) => rows.find((row) => row.family === family);
    const [salesOrder, kase] = [of('salesOrder'), of('customerReturn')];
    return salesOrder && kase && { salesOrder, customerReturn: kase };
  });
}

/** The parked page's row of one email (`mail`) or push (`push`), by its family and key. */
function parkedRow(kind: 'mail' | 'push', family: string, key: string) {
  return page.locator(`tr[data-${kind}][data-family="${family}"][data-key="${key}"]`);
}

describe('the console in a browser', () => {
  it("reads an order's timeline as a story: a duplicate, a release, a stale read, the email sent", async () => {
    asAdmin();
    await open('#/orders');
    await page.getByLabel('Sales order').fill('1000473');
    await page.getByRole('button', { name: 'Show timeline' }).click();
    await page.waitForURL(/#\/orders\/1000473$/);
    const vans = await story();
    expect(vans.filter((line) => line.startsWith('duplicate: '))).toHaveLength(1);
    const sent = vans.filter((line) => line.startsWith('sent: '));
    expect(sent).toHaveLength(2);
    const messageIds = world.smtp.messages.map((mail) => mail.messageId);
    for (const line of sent) expect(messageIds.some((id) => id !== '' && line.includes(id))).toBe(true);

    await open('#/orders/1000475');
    const trucks = await story();
    expect(trucks.some((line) => line.startsWith('released: ') && /released 1×/.test(line))).toBe(true);

    await open('#/orders/1000474');
    const taxis = await story();
    const stale = taxis.find((line) => line.startsWith('stale: '));
    expect(stale).toContain('PartiallyDelivered');
    expect(stale).toContain('older than the state already held');
    await screenshot('timeline');

    await open('#/summary');
    await page.getByText('Open orders per sold-to party').waitFor();
    await screenshot('summary');
    expect(cspViolations).toEqual([]);
    expect(requestedOutside(requested, service.url)).toEqual([]);
    expect([...requested].some((url) => url.startsWith(`${service.url}/api/orders/`))).toBe(true);
  });

  it('finds a return by its key with leading zeros and reads its timeline as a story', async () => {
    world.s4.returns.setReturn(returnState('60000473', { overallSDProcessStatus: 'B' }));
    const created = customerReturnEvent('60000473', 'Created', { id: 'console-return-created' });
    const mailed = world.smtp.messages.length;
    for (let i = 0; i < 2; i++)
      expect((await push({ 'content-type': 'application/json' }, created)).status).toBe(200);
    await eventually("the case's email to be sent", async () => world.smtp.messages.length === mailed + 1);

    asViewer();
    await open('#/orders');
    await page.getByLabel('Search for').selectOption('returns');
    await page.getByLabel('Customer return').fill('0060000473');
    await page.getByRole('button', { name: 'Show timeline' }).click();
    await page.waitForURL(/#\/returns\/0060000473$/);
    const lines = await story();
    await page.getByText('Timeline of customer return 60000473').waitFor();
    const applied = lines.find((line) => line.startsWith('applied: '));
    expect(applied).toContain('Created.v1 console-return-created arrived by webhook');
    expect(applied).toContain('case status InProcess');
    expect(applied).toContain('the first state of this warranty case');
    expect(lines.filter((line) => line.startsWith('duplicate: '))).toHaveLength(1);
    const sent = lines.find((line) => line.startsWith('sent: '));
    expect(sent).toContain(world.smtp.messages[mailed]?.messageId);
    await screenshot('return-timeline');
  });

  it('replays a dead letter and shows it replayed', async () => {
    asAdmin();
    await open('#/dead-letters');
    const row = page.locator('tr', { hasText: `console-${REPLAYED_ORDER}` });
    await row.getByRole('link').click();
    await page.getByText('delivery limit reached').first().waitFor();
    await screenshot('dead-letter');
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByText('replayed: applied').waitFor();
    await page.locator('main .tag-replayed').waitFor();

    await open('#/dead-letters');
    await row.waitFor();
    await expect(row.locator('.tag-replayed').count()).resolves.toBe(1);
    await expect(row.locator('.tag-dead_lettered').count()).resolves.toBe(0);
    await screenshot('dead-letters');
  });

  it('retries a parked email, which then goes out', async () => {
    asAdmin();
    await open('#/parked');
    const row = page.locator('tr[data-mail]', { hasText: '1000477' });
    await row.getByRole('button', { name: 'Retry' }).waitFor();
    await screenshot('parked');
    const before = world.smtp.messages.length;
    await row.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('status').filter({ hasText: 'retried: pending' }).waitFor();
    await page.getByText('No email needs attention.').waitFor();
    await eventually('the retried email to arrive', async () => world.smtp.messages.length === before + 1);
  });

  it('shows a Viewer no action buttons', async () => {
    asViewer();
    const { rows } = await world.db.pool.query<{ id: string }>(
      `insert into dead_letter (channel, reason, body, family, key) values ('webhook', 'for the Viewer', '\\x7b7d', 'salesOrder', '1000473')
       returning id::text as "id"`,
    );
    await open(`#/dead-letters/${rows[0]?.id}`);
    await page.getByText('for the Viewer').first().waitFor();
    await expect(page.locator('#who').textContent()).resolves.toContain('read only');
    await expect(page.locator('main button').count()).resolves.toBe(0);

    await world.db.pool.query(
      `insert into mail_outbox (family, key, content, recipients, message_id, state, last_error)
       values ('salesOrder', '1000476', '{"portalStatus": "Open"}', '{fleet-manager@fleet.example}', '<viewer@fleet.example>', 'parked', '550 for the Viewer')`,
    );
    await open('#/parked');
    await page.locator('tr[data-mail]', { hasText: '550 for the Viewer' }).waitFor();
    await expect(page.locator('main button').count()).resolves.toBe(0);
  });

  it("retries a return's parked email and then the order's, each exactly that row", async () => {
    const { order, customerReturn } = await orderAndReturn('1000482', '60000482');
    world.smtp.setRefuse(() => 'permanent');
    await deliverBoth(order, customerReturn);
    const parked = await parkedRows('mail_outbox', order, customerReturn);
    world.smtp.setRefuse(undefined);

    asAdmin();
    await open('#/parked');
    const returnRow = parkedRow('mail', 'customerReturn', customerReturn);
    await expect(returnRow.textContent()).resolves.toContain(`Customer return ${customerReturn}`);
    await expect(returnRow.textContent()).resolves.toContain('case status Open');
    const before = world.smtp.messages.length;
    await returnRow.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('status').filter({ hasText: 'retried: pending' }).waitFor();
    await eventually("the return's email to arrive", async () => world.smtp.messages.length === before + 1);
    const [again] = world.smtp.messages.slice(before);
    expect(again?.messageId).toBe(parked.customerReturn.messageId);
    expect(again?.headers['x-customer-return']).toBe(customerReturn);
    // The order the return refers to has its own email, still parked: nothing of it went out again.
    await expect(stateOf('mail_outbox', 'salesOrder', order)).resolves.toBe('parked');

    await open('#/parked');
    await parkedRow('mail', 'salesOrder', order).getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('status').filter({ hasText: 'retried: pending' }).waitFor();
    await eventually("the order's email to arrive", async () => world.smtp.messages.length === before + 2);
    const [orderMail] = world.smtp.messages.slice(before + 1);
    expect(orderMail?.messageId).toBe(parked.salesOrder.messageId);
    expect(orderMail?.headers['x-sales-order']).toBe(order);
    expect(orderMail?.headers['x-customer-return']).toBeUndefined();
    await expect(stateOf('mail_outbox', 'customerReturn', customerReturn)).resolves.toBe('sent');
  });

  it("retries a return's parked portal push and then the order's, each exactly that row", async () => {
    // The return refers to the order: a Retry that went by the order would push the order, not the case.
    const { order, customerReturn } = await orderAndReturn('1000483', '60000483');
    portal.failAlways(order, 'badRequest');
    portal.failAlways(customerReturn, 'badRequest');
    await deliverBoth(order, customerReturn);
    const parked = await parkedRows('portal_push', order, customerReturn);
    portal.failAlways(order, undefined);
    portal.failAlways(customerReturn, undefined);

    asAdmin();
    await open('#/parked');
    const returnRow = parkedRow('push', 'customerReturn', customerReturn);
    await expect(returnRow.textContent()).resolves.toContain(`Customer return ${customerReturn}`);
    await screenshot('parked-pushes');
    await returnRow.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('status').filter({ hasText: 'retried: pending' }).waitFor();
    await eventually(
      'the portal to hold the case',
      async () => portal.caseState(customerReturn) !== undefined,
    );
    const caseRequests = portal.caseRequests(customerReturn);
    expect(caseRequests.map((request) => request.status)).toEqual([400, 200]);
    expect(caseRequests[1]?.idempotencyKey).toBe(parked.customerReturn.pushId);
    expect(portal.requests(order).map((request) => request.status)).toEqual([400]);
    await expect(stateOf('portal_push', 'salesOrder', order)).resolves.toBe('parked');

    await open('#/parked');
    await parkedRow('push', 'salesOrder', order).getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('status').filter({ hasText: 'retried: pending' }).waitFor();
    await eventually('the portal to hold the order', async () => portal.state(order) !== undefined);
    const orderRequests = portal.requests(order);
    expect(orderRequests.map((request) => request.status)).toEqual([400, 200]);
    expect(orderRequests[1]?.idempotencyKey).toBe(parked.salesOrder.pushId);
    expect(portal.caseRequests(customerReturn)).toHaveLength(2);
  });

  it('says "not signed in" when the API answers 401', async () => {
    token = undefined;
    const me = page.waitForResponse((response) => response.url().endsWith('/api/me'));
    await open('#/orders/1000473');
    expect((await me).status()).toBe(401);
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Not signed in');
    await screenshot('not-signed-in');
  });
});
