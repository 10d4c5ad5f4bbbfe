// Reconciliation in the operators' console, in headless Chromium against the real service (real PostgreSQL, the
// S/4HANA stand-in's collections, XSUAA-style signed tokens, mail to an SMTP sink, the portal stand-in): the runs
// page with a done and a failed run, an Admin starting a run, a Viewer without the button, an order's timeline
// telling what reconciliation found and the late event after it, and a return's baseline.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalServer, startPortalServer } from '../../sandbox/portalServer.js';
import { SALES_ORDER_TYPE, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { Service } from '../../src/service/buildService.js';
import { type Browser, launchBrowser, requestedOutside, watchedConsolePage } from '../support/browser.js';
import { registerDestination } from '../support/destination.js';
import { startTestService } from '../support/harness.js';
import { ANN, BEN } from '../support/operators.js';
import { orderMaker } from '../support/orders.js';
import { returnState } from '../support/returns.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';
import { startXsuaaStub, type XsuaaStub, xsuaaEnv } from '../support/xsuaa.js';

const world = useWorld();
let stub: XsuaaStub;
let portal: PortalServer;
let service: Service;
let browser: Browser;
let page: Page;
/** The bearer token the page's /api requests carry, as the approuter would add it. */
let token: string | undefined;
let cspViolations: string[];
let requested: Set<string>;

interface Run {
  id: string;
  family: string;
  mode: string;
  status: string;
  pages: number;
  rows: number;
  repairs: number;
  s4Requests: number;
  error?: { class: string; text: string };
}

beforeAll(async () => {
  stub = await startXsuaaStub();
  portal = await startPortalServer();
  service = await startTestService({
    ...world.endpoints(),
    env: {
      ...xsuaaEnv(stub),
      PORTAL_DESTINATION: registerDestination(portal.url),
      // Runs start only when asked (POST /api/reconcile/runs).
      S4_SOURCE: '/default/sap.s4.beh/S4HCLNT100',
      RECONCILE_INTERVAL: 'off',
    },
    retryPolicy: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    mailPollMs: 50,
  });

  browser = await launchBrowser();
  ({ page, requested, cspViolations } = await watchedConsolePage(browser, service.url, () => token));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await portal?.close();
  await stub?.close();
});

const adminToken = () => stub.token({ scopes: ['Viewer', 'Admin'], user: ANN });
const asAdmin = () => {
  token = adminToken();
};
const asViewer = () => {
  token = stub.token({ scopes: ['Viewer'], user: BEN });
};

async function api(method: 'GET' | 'POST', path: string, body?: object): Promise<Response> {
  return fetch(`${service.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminToken()}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Waits until the run has ended and gives it as GET /api/reconcile/runs lists it. */
async function ended(id: string): Promise<Run> {
  return eventually(`run ${id} to end`, async () => {
    const { runs } = (await (await api('GET', '/api/reconcile/runs')).json()) as { runs: Run[] };
    const run = runs.find((candidate) => candidate.id === id);
    return run !== undefined && run.status !== 'running' ? run : undefined;
  });
}

/** Starts a run of the family (sales orders unless named) through the admin API and waits until it has ended. */
async function reconciled(mode: 'baseline' | 'delta', family = 'salesOrder'): Promise<Run> {
  const started = await api('POST', '/api/reconcile/runs', { family, mode });
  expect(started.status).toBe(202);
  const { runs } = (await started.json()) as { runs: string[] };
  return ended(runs[0] as string);
}

async function open(hash: string): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${service.url}/console/${hash}`);
}

/** The page shows no value the console failed to render. */
async function rendered(): Promise<void> {
  expect(await page.locator('main').textContent()).not.toMatch(/\b(null|undefined|NaN)\b|\[object /);
}

async function story(): Promise<string[]> {
  await page.locator('ol.story li').first().waitFor();
  return page
    .locator('ol.story li')
    .evaluateAll((items) =>
      items.map((item) => `${item.getAttribute('data-tag')}: ${item.textContent ?? ''}`),
    );
}

const { newOrder, changeOrder } = orderMaker(() => world.s4, 9_300_000);
let done: Run;

describe('reconciliation in the console', () => {
  it("tells on an order's timeline what reconciliation found, and a late event after it as stale", async () => {
    const salesOrder = newOrder({ lastChangeDateTime: new Date(Date.now() - 3_600_000).toISOString() });
    const baseline = await reconciled('baseline');
    // Its event dropped: only reconciliation sees the change.
    const changedAt = new Date(Date.now() - 60_000).toISOString();
    changeOrder(salesOrder, {
      overallSDProcessStatus: 'B',
      overallDeliveryStatus: 'B',
      lastChangeDateTime: changedAt,
    });
    done = await reconciled('delta');
    expect(done).toMatchObject({ status: 'done', repairs: 1 });
    await eventually('the repair to be mailed', async () => world.smtp.messages.length === 1);
    const late = salesOrderEvent({
      salesOrder,
      id: `late-${salesOrder}`,
      type: `${SALES_ORDER_TYPE}Changed.v1`,
    });
    const answer = await fetch(`${service.url}/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${stub.token({ scopes: ['EventSubmit'] })}`,
      },
      body: late,
    });
    expect(answer.status).toBe(200);

    asViewer();
    await open(`#/orders/${salesOrder}`);
    const lines = await story();
    const found = lines.filter((line) => line.includes('found by reconciliation'));
    expect(found).toHaveLength(2);
    const [atBaseline, repair] = found as [string, string];
    expect(atBaseline).toMatch(/^applied: /);
    expect(atBaseline).toContain(`Reconciliation run ${baseline.id} (baseline), window everything up to `);
    expect(atBaseline).toContain('the baseline recorded it, no email');
    expect(atBaseline).not.toContain('fleet manager is told');
    expect(repair).toMatch(/^applied: /);
    expect(repair).toMatch(
      new RegExp(`Reconciliation run ${done.id} \\(delta\\), window \\d{4}-\\d\\d-\\d\\d [\\d:]+ UTC to `),
    );
    expect(repair).toContain(`S/4HANA stamp ${changedAt.replace('Z', '0000Z')}`);
    expect(repair).toContain('PartiallyDelivered');
    expect(repair).toContain('real change, email queued');
    const lateLine = lines.findIndex((line) => line.includes(`late-${salesOrder}`));
    expect(lateLine).toBeGreaterThan(lines.indexOf(repair));
    expect(lines[lateLine]).toMatch(
      /^stale: .*arrived by webhook: late, reconciliation had already found this state/,
    );
    await rendered();
    // One email for the one real change: the baseline sent none, the late event none.
    expect(world.smtp.messages).toHaveLength(1);
  });

  it("tells on a return's timeline that the baseline found it and sent no email", async () => {
    world.s4.returns.setReturn(
      returnState('60093001', { lastChangeDateTime: new Date(Date.now() - 3_600_000).toISOString() }),
    );
    const baseline = await reconciled('baseline', 'customerReturn');
    asViewer();
    await open('#/returns/60093001');
    const [found] = await story();
    expect(found).toMatch(/^applied: .*found by reconciliation and was applied/);
    expect(found).toContain(`Reconciliation run ${baseline.id} (baseline)`);
    expect(found).toContain('case status Open');
    expect(found).toContain('the baseline recorded it, no email');
    await rendered();
    expect(world.smtp.messages).toHaveLength(1);
  });

  it('lists a done and a failed run with their figures, and shows a Viewer no button', async () => {
    // S/4HANA answers nothing: the run waits until S4_TIMEOUT_MS, then fails.
    world.s4.setCollectionFault(() => 'hang');
    const started = await api('POST', '/api/reconcile/runs', { family: 'salesOrder' });
    const failed = await ended(((await started.json()) as { runs: string[] }).runs[0] as string);
    world.s4.setCollectionFault(undefined);
    expect(failed.status).toBe('failed');

    asViewer();
    await open('#/reconcile');
    const doneRow = page.locator(`tr[data-run="${done.id}"]`);
    await doneRow.waitFor();
    const doneCells = await doneRow.locator('td').allTextContents();
    expect(doneCells.slice(0, 4)).toEqual([done.id, 'Sales order', 'delta', 'done']);
    expect(doneCells[4]).toMatch(/^\d{4}-\d\d-\d\d [\d:]+ UTC to \d{4}-\d\d-\d\d [\d:]+ UTC$/);
    expect(doneCells.slice(5, 9)).toEqual([done.pages, done.rows, done.repairs, done.s4Requests].map(String));
    expect(doneCells[11]).toBe('');
    const failedCells = await page.locator(`tr[data-run="${failed.id}"] td`).allTextContents();
    expect(failedCells.slice(0, 4)).toEqual([failed.id, 'Sales order', 'delta', 'failed']);
    expect(failedCells[11]).toBe(`${failed.error?.class}: ${failed.error?.text}`);
    // Newest first.
    const order = await page
      .locator('tr[data-run]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run')));
    expect(order.indexOf(failed.id)).toBeLessThan(order.indexOf(done.id));
    await expect(page.locator('#who').textContent()).resolves.toContain('read only');
    await expect(page.locator('main button').count()).resolves.toBe(0);
    await rendered();
  });

  it('lets an Admin start a run, which then appears in the list, and says why one cannot start', async () => {
    asAdmin();
    await open('#/reconcile');
    await page.getByLabel('Family').selectOption({ label: 'Sales order' });
    await page.getByLabel('Mode').selectOption('sweep');
    await page.getByRole('button', { name: 'Start a run' }).click();
    const status = page.getByRole('status').filter({ hasText: 'started: run ' });
    await status.waitFor();
    const id = /started: run (\d+)/.exec((await status.textContent()) ?? '')?.[1] as string;
    const row = page.locator(`tr[data-run="${id}"]`);
    await row.waitFor();
    expect((await row.locator('td').allTextContents()).slice(1, 3)).toEqual(['Sales order', 'sweep']);
    await expect(ended(id)).resolves.toMatchObject({ family: 'salesOrder', mode: 'sweep' });
    await rendered();

    // While a run of the family is going on (S/4HANA answers nothing), the 409's message shows beside the button.
    world.s4.setCollectionFault(() => 'hang');
    const busy = await api('POST', '/api/reconcile/runs', { family: 'salesOrder' });
    expect(busy.status).toBe(202);
    await open('#/reconcile');
    await page.getByLabel('Family').selectOption({ label: 'Sales order' });
    await page.getByRole('button', { name: 'Start a run' }).click();
    await page.getByRole('status').filter({ hasText: 'a run is going on for salesOrder' }).waitFor();
    await expect(page.getByRole('button', { name: 'Start a run' }).isEnabled()).resolves.toBe(true);
    world.s4.setCollectionFault(undefined);
    await ended(((await busy.json()) as { runs: string[] }).runs[0] as string);

    expect(cspViolations).toEqual([]);
    expect(requestedOutside(requested, service.url)).toEqual([]);
  });
});
