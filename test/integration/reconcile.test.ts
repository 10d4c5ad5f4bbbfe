// Reconciliation in the running service, end to end: the real PostgreSQL, the S/4HANA stand-in's collections,
// the real SMTP stand-in and the portal stand-in, runs started through POST /api/reconcile/runs and applied
// through the real effects of both families.
//
// What is correct: a baseline fills the portal with no email; events dropped for orders and returns are repaired
// by one delta run, one email per real change; the late real event after a repair sends no second email; the
// same change read by two windows is a duplicate; a return S/4HANA no longer has is withdrawn by a sweep; a
// failed run is a run record, a metric and a log line, while /health stays up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PortalServer, startPortalServer } from '../../sandbox/portalServer.js';
import { CUSTOMER_RETURN_TYPE, SALES_ORDER_TYPE, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { ServiceParts } from '../../src/service/buildService.js';
import { registerDestination } from '../support/destination.js';
import { buildTestService, startTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { returnState } from '../support/returns.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const SOURCE = '/default/sap.s4.beh/S4HCLNT100';
const world = useWorld();
let portal: PortalServer;
let service: ServiceParts;
const logLines: string[] = [];

beforeAll(async () => {
  portal = await startPortalServer();
  service = await buildTestService({
    ...world.endpoints(),
    env: {
      S4_SOURCE: SOURCE,
      RECONCILE_INTERVAL: 'off',
      PORTAL_DESTINATION: registerDestination(portal.url),
      LOG_LEVEL: 'info',
    },
    logLines,
    mailPollMs: 50,
  });
  service.mailSender.start();
  service.portalSender?.start();
});

afterAll(async () => {
  await service?.stop();
  await portal?.close();
});

const { newOrder, changeOrder } = orderMaker(() => world.s4, 9_100_000);

/** An ISO instant `ms` before now. */
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

interface Run {
  id: string;
  family: string;
  mode: string;
  status: string;
  windowFrom: string | null;
  windowTo: string | null;
  rows: number;
  repairs: number;
  s4Requests: number;
  error?: { class: string; text: string };
}

const inject = (method: 'GET' | 'POST', url: string, payload?: object) =>
  service.app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });

/** Starts runs through the API and waits until each has ended. */
async function runs(body: object): Promise<Run[]> {
  const started = await inject('POST', '/api/reconcile/runs', body);
  expect(started.statusCode).toBe(202);
  const ids = (started.json() as { runs: string[] }).runs;
  return eventually(`runs ${ids.join(', ')} to end`, async () => {
    const listed = (await inject('GET', '/api/reconcile/runs')).json() as { runs: Run[] };
    const ended = ids.map((id) => listed.runs.find((run) => run.id === id));
    return ended.every((run) => run !== undefined && run.status !== 'running') ? (ended as Run[]) : undefined;
  });
}

const count = async (sql: string, values: unknown[] = []) =>
  (await world.db.pool.query<{ n: number }>(`select count(*)::int as "n" from ${sql}`, values)).rows[0]?.n;

const metric = async (line: RegExp) => {
  const text = (await inject('GET', '/metrics')).body;
  const found = text.split('\n').find((row) => line.test(row));
  return found === undefined ? undefined : Number(found.split(' ').at(-1));
};

describe('reconciliation in the service', () => {
  const orders: string[] = [];
  const returns = ['60091001', '60091002'];

  it('loads the portal at go-live with a baseline: every open order and case, pushed, and no email', async () => {
    for (let i = 0; i < 3; i++) orders.push(newOrder({ lastChangeDateTime: ago(60 * 60_000 + i) }));
    for (const customerReturn of returns)
      world.s4.returns.setReturn(returnState(customerReturn, { lastChangeDateTime: ago(50 * 60_000) }));

    const ended = await runs({ mode: 'baseline' });
    expect(ended.map((run) => [run.family, run.mode, run.status, run.repairs])).toEqual([
      ['salesOrder', 'baseline', 'done', 0],
      ['customerReturn', 'baseline', 'done', 0],
    ]);
    expect(await count('portal_order_status where sales_order = any($1)', [orders])).toBe(3);
    expect(
      await count(`warranty_case where customer_return = any($1) and case_status = 'Open'`, [returns]),
    ).toBe(2);
    // The ledger holds them, so their first real change is a change, not news.
    expect(await count('order_notification where sales_order = any($1)', [orders])).toBe(3);
    expect(await count('mail_outbox')).toBe(0);
    await eventually(
      'the portal to hold every order and case',
      async () =>
        orders.every((order) => portal.state(order) !== undefined) &&
        returns.every((customerReturn) => portal.caseState(customerReturn) !== undefined),
    );
    expect(await count('mail_outbox')).toBe(0);
    expect(world.smtp.messages).toHaveLength(0);
  });

  it('repairs the changes whose events were dropped in one run, one email per real change', async () => {
    changeOrder(orders[0] as string, {
      overallSDProcessStatus: 'B',
      overallDeliveryStatus: 'B',
      lastChangeDateTime: ago(60_000),
    });
    changeOrder(orders[1] as string, {
      requestedDeliveryDate: '2026-12-24',
      lastChangeDateTime: ago(59_000),
    });
    // A change the ledger does not notify: read and applied, but no repair and no email.
    changeOrder(orders[2] as string, { customerReference: 'PO-4712', lastChangeDateTime: ago(58_000) });
    world.s4.returns.setReturn(
      returnState(returns[0] as string, { overallSDProcessStatus: 'B', lastChangeDateTime: ago(57_000) }),
    );

    const [orderRun, returnRun] = await runs({});
    expect(orderRun).toMatchObject({
      family: 'salesOrder',
      mode: 'delta',
      status: 'done',
      rows: 3,
      repairs: 2,
    });
    expect(returnRun).toMatchObject({
      family: 'customerReturn',
      mode: 'delta',
      status: 'done',
      rows: 1,
      repairs: 1,
    });
    const mails = await world.smtp.waitForCount(3);
    expect(mails).toHaveLength(3);
    expect(await count('mail_outbox')).toBe(3);

    // Each reconciled row is recorded as an event of its own identity, channel and run.
    const { rows } = await world.db.pool.query(
      `select id, channel, reconcile_run::text as "run", notification from processed_event
       where source = $1 and family = 'salesOrder' and key = $2 and reconcile_run = $3`,
      [`${SOURCE}/reconcile`, orders[0], orderRun?.id],
    );
    expect(rows).toEqual([
      {
        id: expect.stringMatching(
          new RegExp(`^salesOrder:${orders[0]}:\\d{4}-\\d\\d-\\d\\dT[\\d:]{8}\\.\\d{7}Z$`),
        ),
        channel: 'reconcile',
        run: orderRun?.id,
        notification: 'changed',
      },
    ]);
    expect(await metric(/^fon_reconcile_repairs_total\{family="sales_order"\}/)).toBe(2);
    expect(await metric(/^fon_reconcile_rows_total\{family="sales_order"\}/)).toBe(6);
    expect(await metric(/^fon_reconcile_requests_total\{family="customer_return"\}/)).toBeGreaterThan(0);
    expect(await metric(/^fon_reconcile_repairing_runs\{family="sales_order"\}/)).toBe(1);
    expect(await metric(/^fon_reconcile_mark_lag_seconds\{family="sales_order"\}/)).toBeGreaterThanOrEqual(0);
    expect(
      await metric(
        /^fon_events_total\{channel="reconcile",outcome="applied",reason="",family="sales_order"\}/,
      ),
    ).toBeGreaterThanOrEqual(3);
    // Every run ends in a line of its own, with what it did.
    const done = await eventually('the runs to be logged', async () => {
      const lines = logLines
        .filter((line) => line.includes('"reconciliation run done"'))
        .map((l) => JSON.parse(l));
      const ours = lines.filter((line) => line.run === orderRun?.id || line.run === returnRun?.id);
      return ours.length === 2 ? ours : undefined;
    });
    expect(done.find((line) => line.run === orderRun?.id)).toMatchObject({
      level: 30,
      family: 'salesOrder',
      mode: 'delta',
      rows: 3,
      repairs: 2,
      pages: expect.any(Number),
      requests: expect.any(Number),
    });
    expect(done.find((line) => line.run === returnRun?.id)).toMatchObject({
      family: 'customerReturn',
      repairs: 1,
    });
  });

  it('sends no second email for the real event that arrives after its repair', async () => {
    const outcome = await service.handle(
      {
        body: Buffer.from(
          salesOrderEvent({
            salesOrder: orders[0],
            id: `late-${orders[0]}`,
            type: `${SALES_ORDER_TYPE}Changed.v1`,
          }),
        ),
        contentType: 'application/json',
        binaryAttributes: {},
      },
      { channel: 'webhook' },
    );
    expect(outcome.outcome).toMatchObject({ kind: 'accept' });
    const { rows } = await world.db.pool.query(
      `select outcome, notification from processed_event where id = $1`,
      [`late-${orders[0]}`],
    );
    expect(['stale', 'unchanged']).toContain(rows[0]?.outcome === 'stale' ? 'stale' : rows[0]?.notification);
    expect(await count(`mail_outbox where key = $1`, [orders[0]])).toBe(1);
  });

  it('keeps one case per return whichever path read it: the real event after a repair opens no second case', async () => {
    const customerReturn = returns[0] as string;
    const mailsBefore = await count('mail_outbox where key = $1', [customerReturn]);
    const outcome = await service.handle(
      {
        body: Buffer.from(
          salesOrderEvent({
            type: `${CUSTOMER_RETURN_TYPE}Changed.v1`,
            id: `late-${customerReturn}`,
            data: { CustomerReturn: customerReturn, EventRaisedDateTime: new Date().toISOString() },
            envelope: { source: SOURCE },
          }),
        ),
        contentType: 'application/json',
        binaryAttributes: {},
      },
      { channel: 'webhook' },
    );
    expect(outcome.outcome).toMatchObject({ kind: 'accept' });
    expect(await count('warranty_case where customer_return = $1', [customerReturn])).toBe(1);
    expect(await count('mail_outbox where key = $1', [customerReturn])).toBe(mailsBefore);
  });

  it('takes the same change read by a second, overlapping window as a duplicate', async () => {
    const duplicates = () =>
      metric(/^fon_events_total\{channel="reconcile",outcome="duplicate",reason="",family="sales_order"\}/);
    const before = (await duplicates()) ?? 0;
    const [again] = await runs({ family: 'salesOrder' });
    expect(again).toMatchObject({ status: 'done', rows: 3, repairs: 0 });
    expect(await duplicates()).toBe(before + 3);
    expect(await count('mail_outbox')).toBe(3);
    // The run before had repairs, this one none: the streak is broken.
    expect(await metric(/^fon_reconcile_repairing_runs\{family="sales_order"\}/)).toBe(0);
  });

  it('withdraws the case of a return S/4HANA no longer has, in a sweep', async () => {
    world.s4.returns.deleteReturn(returns[1] as string);
    const [sweep] = await runs({ family: 'customerReturn', mode: 'sweep' });
    expect(sweep).toMatchObject({ mode: 'sweep', status: 'done' });
    expect(
      await count(`warranty_case where customer_return = $1 and case_status = 'Withdrawn'`, [returns[1]]),
    ).toBe(1);
  });

  it('names the run that found a document on its timeline', async () => {
    const answer = await inject('GET', `/api/orders/${orders[0]}/timeline`);
    const found = (answer.json() as { arrivals: Array<Record<string, unknown>> }).arrivals.filter(
      (arrival) => arrival.channel === 'reconcile',
    );
    // The baseline's, the repair's, and the overlapping window's read of the same change: a duplicate.
    expect(found.map((arrival) => arrival.outcome)).toEqual(['applied', 'applied', 'duplicate']);
    expect(found.map((arrival) => (arrival.run as { mode?: string } | undefined)?.mode)).toEqual([
      'baseline',
      'delta',
      undefined,
    ]);
    expect(found[1]).toMatchObject({
      channel: 'reconcile',
      run: {
        id: expect.any(String),
        mode: 'delta',
        windowFrom: expect.any(String),
        windowTo: expect.any(String),
      },
      stamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:]{8}\.\d{7}Z$/),
    });
  });

  it('applies a document whose earlier runs failed however often: no delivery limit, the next run repairs it', async () => {
    const changedAt = new Date(Date.now() - 30_000);
    changeOrder(orders[1] as string, {
      overallSDProcessStatus: 'C',
      overallDeliveryStatus: 'C',
      lastChangeDateTime: changedAt.toISOString(),
    });
    const id = `salesOrder:${orders[1]}:${changedAt.toISOString().replace('Z', '0000Z')}`;
    // As left by many runs that failed on it.
    await world.db.pool.query(
      `insert into event_attempt (source, id, channel, family, key, attempts, last_error)
       values ($1, $2, 'reconcile', 'salesOrder', $3, 50, 'S/4HANA unavailable')`,
      [`${SOURCE}/reconcile`, id, orders[1]],
    );
    const [run] = await runs({ family: 'salesOrder' });
    expect(run).toMatchObject({ status: 'done', repairs: 1 });
    expect(
      await count(`processed_event where source = $1 and id = $2 and outcome = 'applied'`, [
        `${SOURCE}/reconcile`,
        id,
      ]),
    ).toBe(1);
  });

  it('lets retention remove runs older than DEDUP_RETENTION_DAYS, and keeps the records that name them', async () => {
    const { rows } = await world.db.pool.query<{ id: string }>(
      `update reconcile_run set started_at = now() - interval '30 days'
       where id = (select min(id) from reconcile_run) returning id::text as "id"`,
    );
    const old = rows[0]?.id as string;
    const report = await service.retention.runOnce();
    expect(report.deleted.reconcileRuns).toBe(1);
    expect(await count('reconcile_run where id = $1', [old])).toBe(0);
    expect(await count('processed_event where reconcile_run = $1', [old])).toBeGreaterThan(0);
  });

  it('validates a start: 400 with a reason for an unknown family or mode', async () => {
    const family = await inject('POST', '/api/reconcile/runs', { family: 'invoice' });
    expect(family.statusCode).toBe(400);
    expect(family.json()).toMatchObject({ message: expect.stringContaining('unknown family "invoice"') });
    const mode = await inject('POST', '/api/reconcile/runs', { mode: 'full' });
    expect(mode.statusCode).toBe(400);
    expect(mode.json()).toMatchObject({ message: expect.stringContaining('unknown mode "full"') });
  });

  it('answers 409 while a run of the family is going on, and keeps /health up while S/4HANA fails the run', async () => {
    // S/4HANA answers nothing: the run waits for its request until S4_TIMEOUT_MS, then fails.
    world.s4.setCollectionFault(() => 'hang');
    const started = await inject('POST', '/api/reconcile/runs', { family: 'salesOrder' });
    expect(started.statusCode).toBe(202);
    const busy = await inject('POST', '/api/reconcile/runs', { family: 'salesOrder' });
    expect(busy.statusCode).toBe(409);
    // Audit-logged as every admin action: the caller, what was asked, what started.
    const audited = logLines
      .filter((line) => line.includes('admin: reconcile runs'))
      .map((line) => JSON.parse(line));
    expect(audited.at(-1)).toMatchObject({
      caller: 'local/no-auth',
      family: 'salesOrder',
      mode: 'delta',
      runs: [],
      busy: ['salesOrder'],
    });
    const [id] = (started.json() as { runs: string[] }).runs;
    const failed = await eventually('the run to fail', async () => {
      const listed = (await inject('GET', '/api/reconcile/runs')).json() as { runs: Run[] };
      const run = listed.runs.find((r) => r.id === id);
      return run?.status === 'failed' ? run : undefined;
    });
    expect(failed.error).toMatchObject({ class: expect.any(String), text: expect.any(String) });
    expect((await inject('GET', '/health')).statusCode).toBe(200);
    expect(await metric(/^fon_reconcile_runs_total\{family="sales_order",status="failed"\}/)).toBe(1);
    await eventually('the failure to be logged', async () =>
      logLines.some((line) => line.includes('reconciliation run failed')),
    );
    world.s4.setCollectionFault(undefined);
  });
});

describe('over OData V4', () => {
  it('repairs orders and returns read from the V4 collections, with their 7-digit stamps', async () => {
    const source = '/default/sap.s4.beh/S4HCLNT400';
    const v4 = await buildTestService({
      ...world.endpoints(),
      env: { S4_SOURCE: source, S4_API: 'v4', RECONCILE_INTERVAL: 'off' },
    });
    try {
      const order = newOrder({ lastChangeDateTime: ago(60 * 60_000) });
      const customerReturn = '60094001';
      world.s4.returns.setReturn(returnState(customerReturn, { lastChangeDateTime: ago(60 * 60_000) }));
      const run = async (mode: 'baseline' | 'delta') => {
        for (const family of ['salesOrder', 'customerReturn']) {
          const started = await v4.reconciliation?.runner.start(family, mode);
          if (started === undefined || started === 'busy') throw new Error(`no run of ${family}`);
          expect(await started.ended).toMatchObject({ status: 'done' });
        }
      };
      await run('baseline');
      changeOrder(order, {
        overallSDProcessStatus: 'C',
        overallDeliveryStatus: 'C',
        lastChangeDateTime: `${ago(60_000).slice(0, 19)}.1234567Z`,
      });
      world.s4.returns.setReturn(
        returnState(customerReturn, { rejectionStatus: 'C', lastChangeDateTime: ago(50_000) }),
      );
      await run('delta');
      const { rows } = await world.db.pool.query<{ key: string; id: string }>(
        `select key, id from processed_event where source = $1 and notification = 'changed' order by key`,
        [`${source}/reconcile`],
      );
      expect(rows.map((row) => row.key)).toEqual([order, customerReturn].sort());
      // V4 writes all 7 digits of LastChangeDateTime, and the identity keeps them.
      expect(rows.find((row) => row.key === order)?.id).toMatch(/\.\d{3}4567Z$/);
      expect(await count('mail_outbox where key = any($1)', [[order, customerReturn]])).toBe(2);
    } finally {
      await v4.stop();
    }
  });
});

describe('on the timer', () => {
  it('runs every family each RECONCILE_INTERVAL once started, and stops its runs at shutdown', async () => {
    const timed = await startTestService({
      ...world.endpoints(),
      env: { S4_SOURCE: '/default/sap.s4.beh/S4HCLNT200', RECONCILE_INTERVAL: '1s' },
    });
    try {
      await eventually('a run of each family on the timer', async () => {
        const { rows } = await world.db.pool.query<{ family: string }>(
          `select distinct family from reconcile_run where source = $1 and status = 'done'`,
          ['/default/sap.s4.beh/S4HCLNT200'],
        );
        return rows.length === 2;
      });
    } finally {
      await timed.stop();
    }
    expect(
      await count(`reconcile_run where source = $1 and status = 'running'`, [
        '/default/sap.s4.beh/S4HCLNT200',
      ]),
    ).toBe(0);
  });
});

describe('without S4_SOURCE', () => {
  it('starts as before and says once that reconciliation is off, and why', async () => {
    const lines: string[] = [];
    const plain = await buildTestService({
      ...world.endpoints(),
      env: { LOG_LEVEL: 'info' },
      logLines: lines,
    });
    try {
      const off = lines.filter((line) => line.includes('reconciliation is off'));
      expect(off).toHaveLength(1);
      expect(off[0]).toContain('S4_SOURCE');
      expect(
        (await plain.app.inject({ method: 'GET', url: '/api/reconcile/runs' })).json() as object,
      ).toEqual({
        runs: [],
      });
    } finally {
      await plain.stop();
    }
  });
});
