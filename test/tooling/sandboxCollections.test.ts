import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';

const V2_ORDERS = '/sap/opu/odata/sap/API_SALES_ORDER_SRV/A_SalesOrder';
const V4_ORDERS = '/sap/opu/odata4/sap/api_salesorder/srvd_a2x/sap/salesorder/0001/SalesOrder';
const V2_RETURNS = '/sap/opu/odata/sap/API_CUSTOMER_RETURN_SRV/A_CustomerReturn';
const V4_RETURNS = '/sap/opu/odata4/sap/api_customerreturn/srvd_a2x/sap/customerreturn/0001/CustomerReturn';

type Row = Record<string, unknown>;

describe('S/4HANA stand-in: collection queries', () => {
  let s4: S4Server;
  const query = (path: string, options: Record<string, string>) =>
    `${s4.url}${path}?${Object.entries(options)
      .map(([key, value]) => `${key}=${encodeURIComponent(value)}`)
      .join('&')}`;
  const v2Rows = async (url: string) => {
    const res = await fetch(url);
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { d: { results: Row[]; __next?: string } }).d;
  };
  const v4Rows = async (url: string) => {
    const res = await fetch(url);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as { value: Row[]; '@odata.nextLink'?: string };
  };

  beforeAll(async () => {
    s4 = await startS4Server();
    s4.setOrder({ salesOrder: '9', lastChangeDateTime: '2026-12-01T10:00:00.1234567Z' });
    s4.setOrder({ salesOrder: '10', lastChangeDateTime: '2026-12-01T10:00:00.1234567Z' });
    s4.setOrder({ salesOrder: '11', lastChangeDateTime: '2026-12-01T10:00:00.1234999Z' });
    s4.setOrder({
      salesOrder: '12',
      lastChangeDateTime: '2026-12-01T09:00:00Z',
      overallSDProcessStatus: 'C',
    });
    s4.setOrder({
      salesOrder: '13',
      lastChangeDateTime: '2026-12-01T11:00:00Z',
      overallSDProcessStatus: 'B',
    });
    s4.returns.setReturn({
      customerReturn: '60000001',
      lastChangeDateTime: '2026-12-01T10:00:00.5000001Z',
      items: [{ customerReturnItem: '10', returnReason: '101' }],
    });
    s4.returns.setReturn({
      customerReturn: '60000002',
      lastChangeDateTime: '2026-12-01T12:00:00Z',
      overallSDProcessStatus: 'C',
      items: [{ customerReturnItem: '10' }],
    });
  });

  afterAll(async () => {
    await s4.close();
  });

  beforeEach(() => {
    s4.setPageSize(undefined);
    s4.setCollectionFault(undefined);
    s4.setRetryAfter(1);
  });

  it('filters V2 orders on LastChangeDateTime at 7 digits and on status, ordered by stamp then key, with /Date()/ values and 7-digit ETags', async () => {
    const d = await v2Rows(
      query(V2_ORDERS, {
        $filter:
          "LastChangeDateTime ge datetimeoffset'2026-12-01T10:00:00.1234567Z' and OverallSDProcessStatus ne 'C'",
        $orderby: 'LastChangeDateTime asc,SalesOrder asc',
        $select: 'SalesOrder,LastChangeDateTime',
        $format: 'json',
      }),
    );
    expect(d.results.map((row) => row.SalesOrder)).toEqual(['9', '10', '11', '13']);
    expect(d.__next).toBeUndefined();
    const [nine, , eleven] = d.results as [Row, Row, Row];
    // Keys of digits order as SAP's ALPHA conversion stores them: 9 before 10.
    expect(nine).toEqual({
      __metadata: expect.objectContaining({
        etag: `W/"datetimeoffset'2026-12-01T10%3A00%3A00.1234567Z'"`,
      }),
      SalesOrder: '9',
      LastChangeDateTime: `/Date(${Date.parse('2026-12-01T10:00:00.123Z')}+0000)/`,
    });
    // Same millisecond in the JSON, told apart only by the ETag.
    expect(eleven.LastChangeDateTime).toBe(nine.LastChangeDateTime);
    expect((eleven.__metadata as Row).etag).toBe(`W/"datetimeoffset'2026-12-01T10%3A00%3A00.1234999Z'"`);
  });

  it('pages by key: gt, eq and and, or, in parentheses, on V4 bare timestamps', async () => {
    const page = await v4Rows(
      query(V4_ORDERS, {
        $filter:
          "(LastChangeDateTime gt 2026-12-01T10:00:00.1234567Z) or (LastChangeDateTime eq 2026-12-01T10:00:00.1234567Z and SalesOrder gt '9')",
        $orderby: 'LastChangeDateTime asc,SalesOrder asc',
        $top: '2',
      }),
    );
    expect(page.value.map((row) => [row.SalesOrder, row.LastChangeDateTime])).toEqual([
      ['10', '2026-12-01T10:00:00.1234567Z'],
      ['11', '2026-12-01T10:00:00.1234999Z'],
    ]);
  });

  it('orders descending on several keys and bounds with le and lt', async () => {
    const page = await v4Rows(
      query(V4_ORDERS, {
        $filter:
          'LastChangeDateTime le 2026-12-01T10:00:00.1234999Z and LastChangeDateTime lt 2026-12-01T11:00:00Z',
        $orderby: 'LastChangeDateTime desc,SalesOrder desc',
      }),
    );
    expect(page.value.map((row) => row.SalesOrder)).toEqual(['11', '10', '9', '12']);
  });

  it('pages on the server with __next (V2, absolute) and @odata.nextLink (V4, relative), $top bounding the chain', async () => {
    s4.setPageSize(2);
    const options = { $orderby: 'LastChangeDateTime,SalesOrder', $top: '3', $filter: "SalesOrder ne 'x'" };
    const first = await v2Rows(query(V2_ORDERS, options));
    expect(first.results.map((row) => row.SalesOrder)).toEqual(['12', '9']);
    expect(first.__next).toMatch(new RegExp(`^${s4.url}${V2_ORDERS}\\?.*\\$skiptoken=2`));
    const second = await v2Rows(first.__next as string);
    expect(second.results.map((row) => row.SalesOrder)).toEqual(['10']);
    expect(second.__next).toBeUndefined();

    const v4First = await v4Rows(query(V4_ORDERS, { ...options, $top: '5' }));
    const link = v4First['@odata.nextLink'] as string;
    expect(link).toMatch(/^SalesOrder\?/);
    const v4Second = await v4Rows(new URL(link, `${s4.url}${V4_ORDERS}`).toString());
    const v4Third = await v4Rows(
      new URL(v4Second['@odata.nextLink'] as string, `${s4.url}${V4_ORDERS}`).toString(),
    );
    expect([...v4First.value, ...v4Second.value, ...v4Third.value].map((row) => row.SalesOrder)).toEqual([
      '12',
      '9',
      '10',
      '11',
      '13',
    ]);
    expect(v4Third['@odata.nextLink']).toBeUndefined();
  });

  it('serves customer returns in both versions with their items expanded and selected', async () => {
    const v2 = await v2Rows(
      query(V2_RETURNS, {
        $filter:
          "LastChangeDateTime ge datetimeoffset'2026-12-01T10:00:00Z' and OverallSDProcessStatus ne 'C'",
        $orderby: 'LastChangeDateTime,CustomerReturn',
        $select: 'CustomerReturn,LastChangeDateTime,to_Item/CustomerReturnItem,to_Item/ReturnReason',
        $expand: 'to_Item',
      }),
    );
    expect(v2.results).toEqual([
      {
        __metadata: expect.objectContaining({ etag: `W/"datetimeoffset'2026-12-01T10%3A00%3A00.5000001Z'"` }),
        CustomerReturn: '60000001',
        LastChangeDateTime: `/Date(${Date.parse('2026-12-01T10:00:00.500Z')}+0000)/`,
        to_Item: { results: [expect.objectContaining({ CustomerReturnItem: '10', ReturnReason: '101' })] },
      },
    ]);
    const v4 = await v4Rows(
      query(V4_RETURNS, {
        $filter: 'LastChangeDateTime gt 2026-12-01T10:00:00.5000001Z',
        $select: 'CustomerReturn,LastChangeDateTime',
        $expand: '_Item($select=CustomerReturnItem)',
      }),
    );
    expect(v4.value).toEqual([
      expect.objectContaining({
        CustomerReturn: '60000002',
        LastChangeDateTime: '2026-12-01T12:00:00.0000000Z',
        _Item: [{ CustomerReturnItem: '10' }],
      }),
    ]);
  });

  it('answers a collection query with the fault a test asks for: 429 with Retry-After, 500', async () => {
    s4.setRetryAfter(3);
    s4.setCollectionFault((asked) => (asked.n % 2 === 0 ? 'tooMany' : 'error500'));
    const statuses: Array<[number, string | null]> = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(query(V4_RETURNS, { $top: '1' }));
      statuses.push([res.status, res.headers.get('retry-after')]);
    }
    expect(statuses.sort()).toEqual([
      [429, '3'],
      [500, null],
    ]);
    expect(s4.collectionLog().at(-1)).toMatchObject({ api: 'v4', set: 'CustomerReturn', query: '$top=1' });
  });

  it('shows a document that appears late with an earlier stamp, and leaves it out once deleted', async () => {
    s4.setOrder({ salesOrder: '20', lastChangeDateTime: '2026-12-01T08:00:00Z' });
    const stamps = async () =>
      (await v4Rows(query(V4_ORDERS, { $filter: 'LastChangeDateTime lt 2026-12-01T09:00:00Z' }))).value.map(
        (row) => row.SalesOrder,
      );
    expect(await stamps()).toEqual(['20']);
    s4.deleteOrder('20');
    expect(await stamps()).toEqual([]);
  });

  it("refuses $skip, the other version's time literal and a malformed filter with 400", async () => {
    const statuses = await Promise.all(
      [
        query(V4_ORDERS, { $skip: '2', $top: '1' }),
        query(V4_ORDERS, { $filter: "LastChangeDateTime gt datetimeoffset'2026-12-01T10:00:00Z'" }),
        query(V2_ORDERS, { $filter: 'LastChangeDateTime gt 2026-12-01T10:00:00Z' }),
        query(V2_RETURNS, { $filter: "(CustomerReturn eq '1'" }),
        query(V2_ORDERS, { $orderby: 'SalesOrder sideways' }),
      ].map(async (url) => (await fetch(url)).status),
    );
    expect(statuses).toEqual([400, 400, 400, 400, 400]);
  });
});
