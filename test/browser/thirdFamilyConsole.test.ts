// The operators' console in headless Chromium for a family it was never written for: the test-only outbound
// deliveries (test/support/outboundDelivery/) beside the service's own. Its search option, its timeline and its
// parked push come from GET /api/families and the admin lists alone.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import { FAMILIES } from '../../src/families/index.js';
import type { Service } from '../../src/service/buildService.js';
import { type Browser, launchBrowser } from '../support/browser.js';
import { type DeliveryServer, startDeliveryServer } from '../support/deliveryServer.js';
import { registerDestination } from '../support/destination.js';
import { startTestService } from '../support/harness.js';
import { DELIVERY_TABLE } from '../support/outboundDelivery/effect.js';
import { DELIVERY_TYPE_PREFIX } from '../support/outboundDelivery/events.js';
import { outboundDelivery } from '../support/outboundDelivery/index.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const DELIVERY = '80000473';

const world = useWorld();
let deliveries: DeliveryServer;
let service: Service;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  deliveries = await startDeliveryServer();
  const destination = registerDestination(deliveries.url);
  await world.db.pool.query(DELIVERY_TABLE);
  service = await startTestService({
    ...world.endpoints(),
    families: [...FAMILIES, outboundDelivery(destination)],
    env: { PORTAL_DESTINATION: destination },
    retryPolicy: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
  deliveries.set({
    DeliveryDocument: DELIVERY,
    OverallGoodsMovementStatus: 'C',
    SoldToParty: '17100001',
    changedAt: new Date('2026-03-02T08:00:00Z'),
  });
  deliveries.refusePut(DELIVERY, true);
  const event = salesOrderEvent({
    id: `console-${DELIVERY}`,
    type: `${DELIVERY_TYPE_PREFIX}Changed.v1`,
    data: { DeliveryDocument: DELIVERY },
  });
  const answer = await fetch(`${service.url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: event,
  });
  expect(answer.status).toBe(200);
  await eventually('its push to be parked', async () => {
    const { rowCount } = await world.db.pool.query(
      `select from portal_push where family = 'outboundDelivery' and key = $1 and state = 'parked'`,
      [DELIVERY],
    );
    return rowCount === 1;
  });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.setDefaultTimeout(15_000);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await deliveries?.close();
});

describe('the console, for a family it does not name', () => {
  it("offers the family's search and tells its timeline in the family's words", async () => {
    await page.goto(`${service.url}/console/#/outbound-deliveries`);
    await page.getByLabel('Search for').selectOption({ label: 'Outbound delivery' });
    await page.getByLabel('Outbound delivery').fill(`00${DELIVERY}`);
    await page.getByRole('button', { name: 'Show timeline' }).click();
    await page.getByText(`Timeline of outbound delivery ${DELIVERY}`).waitFor();
    await page.locator('ol.story li').first().waitFor();
    const story = await page.locator('ol.story').textContent();
    expect(story).toContain('Shipped');
    expect(await page.locator('main').textContent()).not.toMatch(/\b(null|undefined|NaN)\b|\[object /);
  });

  it('lists its parked push by its label and key, linked to its timeline', async () => {
    await page.goto('about:blank');
    await page.goto(`${service.url}/console/#/parked`);
    const row = page.locator(`tr[data-push][data-family="outboundDelivery"][data-key="${DELIVERY}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain(`Outbound delivery ${DELIVERY}`);
    await row.getByRole('link', { name: `Outbound delivery ${DELIVERY}` }).click();
    await page.getByText(`Timeline of outbound delivery ${DELIVERY}`).waitFor();
  });
});
