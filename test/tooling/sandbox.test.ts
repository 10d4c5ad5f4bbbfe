import { createTransport } from 'nodemailer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import { type SmtpSink, startSmtpServer } from '../../sandbox/smtpServer.js';
import { gate } from '../support/gate.js';
import { doesNotHang } from '../support/waits.js';

const ENTITY_SET = '/sap/opu/odata/sap/API_SALES_ORDER_SRV/A_SalesOrder';
const keyPath = (key: string) => `${ENTITY_SET}('${encodeURIComponent(key.replaceAll("'", "''"))}')`;

describe('S/4HANA sandbox (API_SALES_ORDER_SRV)', () => {
  let s4: S4Server;
  const get = (path: string, init?: RequestInit) => fetch(`${s4.url}${path}`, init);
  const getOrder = (key: string, query = '?$format=json', init?: RequestInit) =>
    get(`${keyPath(key)}${query}`, init);

  beforeAll(async () => {
    s4 = await startS4Server();
  });

  afterAll(async () => {
    await s4.close();
  });

  beforeEach(() => {
    s4.setFault(undefined);
    s4.setLatency(0);
  });

  it('serves an order in the OData V2 JSON shape with /Date()/ values and a weak ETag', async () => {
    s4.setOrder({
      salesOrder: '1000473',
      soldToParty: '17100001',
      customerReference: 'FLEET-PO-77',
      requestedDeliveryDate: '2025-05-12',
      lastChangeDateTime: '2025-05-12T11:40:00Z',
      overallSDProcessStatus: 'B',
      overallDeliveryStatus: 'B',
      overallTotalDeliveryStatus: 'A',
      totalNetAmount: '1234.50',
      currency: 'EUR',
    });
    const res = await getOrder('1000473');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(s4.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const etag = `W/"datetimeoffset'2025-05-12T11%3A40%3A00.0000000Z'"`;
    expect(res.headers.get('etag')).toBe(etag);
    const { d } = (await res.json()) as { d: Record<string, unknown> };
    expect(d).toMatchObject({
      __metadata: {
        id: `${s4.url}${ENTITY_SET}('1000473')`,
        uri: `${s4.url}${ENTITY_SET}('1000473')`,
        type: 'API_SALES_ORDER_SRV.A_SalesOrderType',
        etag,
      },
      SalesOrder: '1000473',
      SalesOrderType: 'OR',
      SalesOrganization: '1710',
      DistributionChannel: '10',
      OrganizationDivision: '00',
      SoldToParty: '17100001',
      PurchaseOrderByCustomer: 'FLEET-PO-77',
      CreationDate: '/Date(1747008000000)/',
      RequestedDeliveryDate: '/Date(1747008000000)/',
      LastChangeDateTime: '/Date(1747050000000+0000)/',
      OverallSDProcessStatus: 'B',
      OverallDeliveryStatus: 'B',
      OverallTotalDeliveryStatus: 'A',
      OverallSDDocumentRejectionSts: '',
      DeliveryBlockReason: '',
      TotalNetAmount: '1234.50',
      TransactionCurrency: 'EUR',
    });
  });

  it('renders a missing requested delivery date as null and blank statuses as empty strings', async () => {
    s4.setOrder({ salesOrder: '1000474', lastChangeDateTime: '2026-03-03T13:19:53.812Z' });
    const { d } = (await (await getOrder('1000474')).json()) as { d: Record<string, unknown> };
    expect(d.RequestedDeliveryDate).toBeNull();
    expect(d.LastChangeDateTime).toBe(`/Date(${Date.parse('2026-03-03T13:19:53.812Z')}+0000)/`);
    expect(d.OverallDeliveryStatus).toBe('');
    expect(d.OverallSDDocumentRejectionSts).toBe('');
  });

  it('decodes URL-encoding and doubled quotes in the key, in both key forms', async () => {
    s4.setOrder({ salesOrder: "O'K 1/2", lastChangeDateTime: '2025-05-12T11:40:00Z' });
    const plain = await getOrder("O'K 1/2");
    expect(plain.status).toBe(200);
    expect(((await plain.json()) as { d: { SalesOrder: string } }).d.SalesOrder).toBe("O'K 1/2");
    const named = await get(`${ENTITY_SET}(SalesOrder=%27O%27%27K%201%2F2%27)?$format=json`);
    expect(named.status).toBe(200);
    expect(s4.calls("O'K 1/2")).toBe(2);
  });

  it('answers 400 to a key whose quote was not doubled', async () => {
    s4.setOrder({ salesOrder: "O'K", lastChangeDateTime: '2025-05-12T11:40:00Z' });
    const res = await get(`${ENTITY_SET}('O'K')?$format=json`);
    expect(res.status).toBe(400);
  });

  it('answers 404 with the SAP error body for an unknown order and for a deleted one', async () => {
    const res = await getOrder('9999999');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: {
        code: 'SY/530',
        message: { lang: 'en', value: "Resource not found for segment 'A_SalesOrderType'" },
      },
    });
    s4.setOrder({ salesOrder: '1000475', lastChangeDateTime: '2025-05-12T11:40:00Z' });
    s4.deleteOrder('1000475');
    expect((await getOrder('1000475')).status).toBe(404);
    expect(s4.getOrder('1000475')).toBeUndefined();
  });

  it('answers 404 to unknown paths and 405 to other methods', async () => {
    const unknown = await get('/sap/opu/odata/sap/API_SALES_ORDER_SRV/A_Nope');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { message: { lang: 'en' } } });
    const post = await get(keyPath('1000473'), { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });

  it('honours $select and fails on a property the emulated release lacks', async () => {
    const old = await startS4Server({ omitOverallDeliveryStatus: true });
    try {
      old.setOrder({ salesOrder: '1000476', lastChangeDateTime: '2025-05-12T11:40:00Z' });
      const full = (await (await fetch(`${old.url}${keyPath('1000476')}?$format=json`)).json()) as {
        d: Record<string, unknown>;
      };
      expect(full.d).not.toHaveProperty('OverallDeliveryStatus');
      expect(full.d).toHaveProperty('OverallTotalDeliveryStatus', '');
      const selected = await fetch(
        `${old.url}${keyPath('1000476')}?$format=json&$select=OverallDeliveryStatus`,
      );
      expect(selected.status).toBe(400);
    } finally {
      await old.close();
    }
    s4.setOrder({ salesOrder: '1000476', lastChangeDateTime: '2025-05-12T11:40:00Z' });
    const res = await getOrder('1000476', '?$format=json&$select=SalesOrder,OverallDeliveryStatus');
    const { d } = (await res.json()) as { d: Record<string, unknown> };
    expect(Object.keys(d).sort()).toEqual(['OverallDeliveryStatus', 'SalesOrder', '__metadata']);
  });

  it('counts reads in total and per order, faulted and missing ones included', async () => {
    const before = s4.calls();
    s4.setOrder({ salesOrder: '1000477', lastChangeDateTime: '2025-05-12T11:40:00Z' });
    await getOrder('1000477');
    await getOrder('1000477');
    await getOrder('7777777');
    s4.setFault(() => 'error500');
    await getOrder('1000477');
    expect(s4.calls('1000477')).toBe(3);
    expect(s4.calls('7777777')).toBe(1);
    expect(s4.calls('never-read')).toBe(0);
    expect(s4.calls()).toBe(before + 4);
  });

  it('injects each fault kind with an OData error body, numbering calls per order', async () => {
    s4.setOrder({ salesOrder: '1000478', lastChangeDateTime: '2025-05-12T11:40:00Z' });
    const seen: Array<[string, number]> = [];
    const kinds = ['unavailable', 'tooMany', 'error500', 'ok'] as const;
    s4.setFault((salesOrder, callNo) => {
      seen.push([salesOrder, callNo]);
      return kinds[callNo - 1] ?? 'ok';
    });
    const unavailable = await getOrder('1000478');
    expect(unavailable.status).toBe(503);
    expect(await unavailable.json()).toMatchObject({ error: { message: { lang: 'en' } } });
    const tooMany = await getOrder('1000478');
    expect(tooMany.status).toBe(429);
    expect(tooMany.headers.get('retry-after')).toBe('1');
    const error500 = await getOrder('1000478');
    expect(error500.status).toBe(500);
    expect(await error500.json()).toHaveProperty('error.code');
    expect((await getOrder('1000478')).status).toBe(200);
    expect(seen).toEqual([
      ['1000478', 1],
      ['1000478', 2],
      ['1000478', 3],
      ['1000478', 4],
    ]);
  });

  it('answers each scripted read of an order in turn, holds one until its gate opens, then repeats the last', async () => {
    const state = (minute: number, status: string) => ({
      salesOrder: '1000481',
      lastChangeDateTime: `2026-11-30T10:${String(minute).padStart(2, '0')}:00Z`,
      overallSDProcessStatus: status,
    });
    s4.setOrder(state(0, 'A'));
    const held = gate();
    s4.scriptReads('1000481', [
      { state: state(1, 'B'), until: held.opened },
      { fault: 'unavailable' },
      { state: state(2, 'C'), latencyMs: 0 },
    ]);
    const status = async (res: Response) =>
      ((await res.json()) as { d: { OverallSDProcessStatus: string } }).d.OverallSDProcessStatus;

    const first = getOrder('1000481');
    let answered = false;
    void first.then(() => {
      answered = true;
    });
    // The held read has reached the server (it counts it) and already moved the order on, but has not answered.
    await expect.poll(() => s4.calls('1000481')).toBe(1);
    expect(s4.getOrder('1000481')?.overallSDProcessStatus).toBe('B');
    expect((await getOrder('1000481')).status).toBe(503);
    expect(answered).toBe(false);
    held.open();
    expect(await status(await first)).toBe('B');
    expect(await status(await getOrder('1000481'))).toBe('C');
    expect(await status(await getOrder('1000481'))).toBe('C');
    s4.scriptReads('1000481', []);
    s4.setFault(() => 'error500');
    expect((await getOrder('1000481')).status).toBe(500);
  });

  it('never answers a hung read until the client gives up, and still closes promptly', async () => {
    const hung = await startS4Server();
    hung.setOrder({ salesOrder: '1000479', lastChangeDateTime: '2025-05-12T11:40:00Z' });
    hung.setFault(() => 'hang');
    const path = `${hung.url}${keyPath('1000479')}?$format=json`;
    await expect(fetch(path, { signal: AbortSignal.timeout(300) })).rejects.toThrow(/abort|timeout/i);
    const pending = fetch(path);
    pending.catch(() => {});
    await expect.poll(() => hung.calls('1000479')).toBe(2);
    // Without destroying the hung socket, close() would wait for it forever.
    await doesNotHang('close() while a read hangs', hung.close());
    await expect(pending).rejects.toThrow();
    expect(hung.calls('1000479')).toBe(2);
  });

  it('delays every answer by the latency without serialising concurrent reads', async () => {
    s4.setOrder({ salesOrder: '1000480', lastChangeDateTime: '2025-05-12T11:40:00Z' });
    s4.setLatency(100);
    let started = Date.now();
    expect((await getOrder('1000480')).status).toBe(200);
    // The pause happens: a timer never fires early (a millisecond of rounding aside).
    expect(Date.now() - started).toBeGreaterThanOrEqual(99);
    started = Date.now();
    const statuses = await Promise.all(
      Array.from({ length: 300 }, async () => (await getOrder('1000480')).status),
    );
    expect(statuses.every((status) => status === 200)).toBe(true);
    // Answered one after the other, 300 reads would need 30 s at least; concurrent ones need about one latency.
    // Half of the serial time is a bound no machine load reaches and a serialising server cannot meet.
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('S/4HANA sandbox order endpoint (local mode)', () => {
  let s4: S4Server;
  const patch = (salesOrder: string, body: string) =>
    fetch(`${s4.url}/orders/${salesOrder}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body,
    });

  beforeAll(async () => {
    s4 = await startS4Server();
  });
  afterAll(() => s4.close());

  it('changes an order by PATCH, moves its LastChangeDateTime forward, and serves the change over OData', async () => {
    s4.setOrder({
      salesOrder: '1000490',
      lastChangeDateTime: '2026-11-01T08:00:00Z',
      soldToParty: '17100001',
    });
    const answer = await patch(
      '1000490',
      '{"requestedDeliveryDate":"2027-03-01","overallDeliveryStatus":"C"}',
    );
    expect(answer.status).toBe(200);
    const state = s4.getOrder('1000490');
    expect(state).toMatchObject({
      soldToParty: '17100001',
      requestedDeliveryDate: '2027-03-01',
      overallDeliveryStatus: 'C',
    });
    expect(Date.parse(state?.lastChangeDateTime ?? '')).toBeGreaterThan(Date.parse('2026-11-01T08:00:00Z'));
    expect(await answer.json()).toEqual(state);
    const odata = await fetch(
      `${s4.url}/sap/opu/odata/sap/API_SALES_ORDER_SRV/A_SalesOrder('1000490')?$format=json`,
    );
    expect(((await odata.json()) as { d: unknown }).d).toMatchObject({
      OverallDeliveryStatus: 'C',
      SoldToParty: '17100001',
    });
    const shown = await fetch(`${s4.url}/orders/1000490`);
    expect(await shown.json()).toEqual(state);
  });

  it('refuses a body that is not JSON, a field no sales order has, a non-text value and a bad date with 400 and the reason', async () => {
    s4.setOrder({ salesOrder: '1000491', lastChangeDateTime: '2026-11-01T08:00:00Z' });
    const cases: Array<[string, RegExp]> = [
      ['{"requestedDeliveryDate":', /JSON object/],
      ['["soldToParty"]', /JSON object/],
      ['{"bogus":"x"}', /not a text field of a sales order: bogus/],
      ['{"soldToParty":17100001}', /not a text field of a sales order: soldToParty/],
      ['{"requestedDeliveryDate":"1 March"}', /is not YYYY-MM-DD/],
    ];
    for (const [body, reason] of cases) {
      const answer = await patch('1000491', body);
      expect(answer.status, body).toBe(400);
      expect(((await answer.json()) as { error: string }).error, body).toMatch(reason);
    }
    expect(s4.getOrder('1000491')).toEqual({
      salesOrder: '1000491',
      lastChangeDateTime: '2026-11-01T08:00:00Z',
    });
    expect((await fetch(`${s4.url}/orders/1000499`)).status).toBe(404);
  });
});

describe('SMTP sandbox', () => {
  let smtp: SmtpSink;
  const send = (headers: Record<string, string> = {}) => {
    const transport = createTransport({ host: '127.0.0.1', port: smtp.port, secure: false });
    return transport
      .sendMail({
        from: 'notifier@fleet.example',
        to: 'manager@fleet.example',
        subject: 'Order 1000473: partially delivered',
        text: 'Your order 1000473 is partially delivered.',
        html: '<p>Your order <b>1000473</b> is partially delivered.</p>',
        headers,
      })
      .finally(() => transport.close());
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
  });

  afterAll(async () => {
    await smtp.close();
  });

  beforeEach(() => {
    smtp.setRefuse(undefined);
    smtp.clear();
  });

  it('receives and parses a message sent by nodemailer, custom headers included', async () => {
    expect(smtp.url).toBe(`smtp://127.0.0.1:${smtp.port}`);
    const info = await send({ 'X-Sales-Order': '1000473' });
    const [mail] = await smtp.waitForCount(1);
    expect(smtp.messages).toHaveLength(1);
    expect(mail).toMatchObject({
      messageId: info.messageId,
      from: 'notifier@fleet.example',
      to: ['manager@fleet.example'],
      subject: 'Order 1000473: partially delivered',
      html: '<p>Your order <b>1000473</b> is partially delivered.</p>',
    });
    expect(mail?.text.trim()).toBe('Your order 1000473 is partially delivered.');
    expect(mail?.headers['x-sales-order']).toBe('1000473');
    expect(mail?.headers['message-id']).toBe(info.messageId);
    expect(mail?.raw).toContain('X-Sales-Order: 1000473');
  });

  it('surfaces a transient refusal as a nodemailer error with code 451 and stores nothing', async () => {
    const calls: number[] = [];
    smtp.setRefuse(({ callNo }) => {
      calls.push(callNo);
      return 'transient';
    });
    await expect(send()).rejects.toMatchObject({ responseCode: 451 });
    expect(calls).toEqual([1]);
    expect(smtp.messages).toHaveLength(0);
  });

  it('surfaces a permanent refusal as a nodemailer error with code 550', async () => {
    smtp.setRefuse(() => 'permanent');
    await expect(send()).rejects.toMatchObject({ responseCode: 550 });
    expect(smtp.messages).toHaveLength(0);
  });

  it('counts attempts per Message-ID so a retry of the same mail can be accepted', async () => {
    smtp.setRefuse(({ callNo }) => (callNo === 1 ? 'transient' : 'accept'));
    const messageId = '<retry-1@fleet.example>';
    await expect(send({ 'Message-ID': messageId })).rejects.toMatchObject({ responseCode: 451 });
    await send({ 'Message-ID': messageId });
    const [mail] = await smtp.waitForCount(1);
    expect(mail?.messageId).toBe(messageId);
  });

  it('closes promptly while a pooled sender keeps its session open', async () => {
    // A minute of grace for sessions that ignore the goodbye: close() must end them itself, not wait it out.
    const sink = await startSmtpServer({ closeTimeoutMs: 60_000 });
    const pool = createTransport({ pool: true, host: '127.0.0.1', port: sink.port, secure: false });
    try {
      await pool.sendMail({ from: 'a@fleet.example', to: 'b@fleet.example', subject: 's', text: 't' });
      await doesNotHang('close() with a pooled session open', sink.close());
      expect(sink.messages).toHaveLength(1);
    } finally {
      pool.close();
    }
  });

  it('rejects waitForCount with how many mails arrived', async () => {
    await expect(smtp.waitForCount(1, 100)).rejects.toThrow(
      'expected 1 mail(s) within 100 ms, but 0 arrived',
    );
  });
});

describe('S/4HANA sandbox: CE_SALESORDER_0001 (V4) and collection reads', () => {
  const V4_SET = '/sap/opu/odata4/sap/api_salesorder/srvd_a2x/sap/salesorder/0001/SalesOrder';
  let s4: S4Server;
  const get = (path: string) => fetch(`${s4.url}${path}`);
  const filtered = (set: string, keys: string[], extra = '') =>
    get(
      `${set}?$filter=${encodeURIComponent(keys.map((key) => `SalesOrder eq '${key}'`).join(' or '))}${extra}`,
    );

  beforeAll(async () => {
    s4 = await startS4Server();
    s4.setOrder({
      salesOrder: '2000001',
      lastChangeDateTime: '2026-03-01T08:00:00.123Z',
      requestedDeliveryDate: '2026-05-12',
      overallDeliveryStatus: 'B',
      totalNetAmount: '1234.50',
    });
    s4.setOrder({ salesOrder: '2000002', lastChangeDateTime: '2026-03-02T08:00:00Z' });
  });
  afterAll(async () => {
    await s4.close();
  });

  it('serves an order in the V4 shape: annotations, Edm.Date, 7-digit DateTimeOffset, numbers, no total status', async () => {
    const response = await get(`${V4_SET}('2000001')`);
    expect(response.status).toBe(200);
    expect(response.headers.get('odata-version')).toBe('4.0');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body['@odata.context']).toMatch(/\$metadata#SalesOrder\/\$entity$/);
    expect(body['@odata.etag']).toMatch(/^W\/"SADL-/);
    expect(body).toMatchObject({
      SalesOrder: '2000001',
      RequestedDeliveryDate: '2026-05-12',
      LastChangeDateTime: '2026-03-01T08:00:00.1230000Z',
      OverallDeliveryStatus: 'B',
      TotalNetAmount: 1234.5,
    });
    expect(body).not.toHaveProperty('OverallTotalDeliveryStatus');
    expect(body).not.toHaveProperty('d');
  });

  it('answers a missing V4 order with 404 and a string message', async () => {
    const response = await get(`${V4_SET}('9999999')`);
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { message: unknown } };
    expect(typeof body.error.message).toBe('string');
  });

  it('answers a $filter of key terms joined by or with the orders it has, in both versions', async () => {
    const v2 = await filtered(
      '/sap/opu/odata/sap/API_SALES_ORDER_SRV/A_SalesOrder',
      ['2000001', '2000002', '404'],
      '&$format=json',
    );
    const v2Body = (await v2.json()) as { d: { results: Array<{ SalesOrder: string }> } };
    expect(v2Body.d.results.map((entity) => entity.SalesOrder)).toEqual(['2000001', '2000002']);
    const v4 = await filtered(V4_SET, ['2000002', '404'], '&$select=SalesOrder,LastChangeDateTime');
    const v4Body = (await v4.json()) as { value: Array<Record<string, unknown>> };
    expect(v4Body.value).toEqual([
      {
        '@odata.etag': expect.any(String),
        SalesOrder: '2000002',
        LastChangeDateTime: '2026-03-02T08:00:00.0000000Z',
      },
    ]);
  });

  it('counts one request and one read per order of a collection read', async () => {
    const [requests, reads] = [s4.requests(), s4.calls('2000001')];
    await filtered(V4_SET, ['2000001', '2000002']);
    expect(s4.requests()).toBe(requests + 1);
    expect(s4.calls('2000001')).toBe(reads + 1);
    expect(s4.requestLog().at(-1)).toMatchObject({
      api: 'v4',
      collection: true,
      salesOrders: ['2000001', '2000002'],
    });
  });

  it('refuses other filters, and every filter while told to, with 400', async () => {
    expect((await get(`${V4_SET}?$filter=${encodeURIComponent("SalesOrder in ('1','2')")}`)).status).toBe(
      400,
    );
    expect((await get(V4_SET)).status).toBe(400);
    s4.refuseFilters(true);
    expect((await filtered(V4_SET, ['2000001'])).status).toBe(400);
    s4.refuseFilters(false);
    expect((await filtered(V4_SET, ['2000001'])).status).toBe(200);
  });

  it('sends the Retry-After it is given with a 429', async () => {
    s4.setRetryAfter(2);
    s4.setFault(() => 'tooMany');
    const response = await filtered(V4_SET, ['2000001', '2000002']);
    s4.setFault(undefined);
    s4.setRetryAfter(1);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
  });
});
