// The OData V4 wire format of CE_SALESORDER_0001 (docs/s4hana.md, V4 wire format). The entity's shape follows a
// captured V4 sales-order answer (annotations at the top level, Edm.Date strings, a null LastChangeDateTime).
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/errors.js';
import { toSalesOrder } from '../../src/families/salesOrder/entity.js';
import { odataV4 } from '../../src/families/salesOrder/services.js';
import { UnexpectedResponseError } from '../../src/s4/odataEntity.js';
import { parseEdmDate, parseEdmDateTimeOffset } from '../../src/s4/odataV4.js';

const entity = (fields: Record<string, unknown> = {}) => ({
  '@odata.context': '$metadata#SalesOrder/$entity',
  '@odata.metadataEtag': 'W/"20260911190145"',
  '@odata.etag': 'W/"SADL-020260301080000C~20260301080000.1234567"',
  SalesOrder: '1000473',
  SoldToParty: '17100001',
  PurchaseOrderByCustomer: 'PO 4711 ',
  RequestedDeliveryDate: '2026-05-12',
  LastChangeDateTime: '2026-03-01T08:00:00.1234567Z',
  OverallSDProcessStatus: 'B',
  OverallDeliveryStatus: 'C',
  OverallSDDocumentRejectionSts: '',
  DeliveryBlockReason: '',
  TotalNetAmount: 1234.5,
  ...fields,
});
const map = (body: unknown) => toSalesOrder(odataV4.entity(body), '1000473', odataV4.time);

describe('OData V4 times', () => {
  it('reads Edm.DateTimeOffset with 7 fractional digits, cut to milliseconds', () => {
    expect(parseEdmDateTimeOffset('2026-03-01T08:00:00.1234567Z')?.toISOString()).toBe(
      '2026-03-01T08:00:00.123Z',
    );
    expect(parseEdmDateTimeOffset('2026-03-01T08:00:00.9999999Z')?.toISOString()).toBe(
      '2026-03-01T08:00:00.999Z',
    );
    expect(parseEdmDateTimeOffset('2026-03-01T09:00:00+01:00')?.toISOString()).toBe(
      '2026-03-01T08:00:00.000Z',
    );
    expect(parseEdmDateTimeOffset(null)).toBeNull();
  });
  it('reads Edm.Date as the calendar date it names', () => {
    expect(parseEdmDate('2026-05-12')).toBe('2026-05-12');
    expect(parseEdmDate(null)).toBeNull();
  });
  it('refuses V2 dates and other shapes, transient', () => {
    expect(() => parseEdmDate('/Date(1747008000000)/')).toThrow(UnexpectedResponseError);
    expect(() => parseEdmDate('2026-13-45')).toThrow(/not an Edm.Date/);
    expect(() => parseEdmDateTimeOffset('2026-03-01 08:00:00')).toThrow(/not an Edm.DateTimeOffset/);
    expect(() => parseEdmDateTimeOffset(1_772_352_000_000)).toThrow(UnexpectedResponseError);
    expect(classify(new UnexpectedResponseError('x'))).toBe('transient');
  });
});

describe('mapping SalesOrder (V4)', () => {
  it('maps the same header as V2, ignoring the ETag and numeric amounts', () => {
    expect(map(entity())).toEqual({
      salesOrder: '1000473',
      soldToParty: '17100001',
      customerReference: 'PO 4711',
      requestedDeliveryDate: '2026-05-12',
      changedAt: new Date('2026-03-01T08:00:00.123Z'),
      overallSDProcessStatus: 'B',
      deliveryStatus: 'C',
      rejectionStatus: '',
      deliveryBlockReason: '',
    });
  });
  it('takes the delivery status from OverallDeliveryStatus, with no OverallTotalDeliveryStatus in V4', () => {
    const order = map(entity({ OverallDeliveryStatus: 'B' }));
    expect(order.deliveryStatus).toBe('B');
    expect('OverallTotalDeliveryStatus' in entity()).toBe(false);
  });
  it('maps a missing LastChangeDateTime and date to null', () => {
    const order = map(entity({ LastChangeDateTime: null, RequestedDeliveryDate: null }));
    expect(order.changedAt).toBeNull();
    expect(order.requestedDeliveryDate).toBeNull();
  });
  it('refuses a V2 body and another order', () => {
    expect(() => map([entity()])).toThrow(/not an OData V4 entity/);
    expect(() => map(entity({ SalesOrder: '1' }))).toThrow(/for sales order "1"/);
  });
  it('reads collections from "value" and sees server-driven paging', () => {
    expect(odataV4.collection({ value: [entity()] })).toMatchObject({
      complete: true,
      entities: [{ SalesOrder: '1000473' }],
    });
    expect(odataV4.collection({ value: [], '@odata.nextLink': 'SalesOrder?$skiptoken=1' }).complete).toBe(
      false,
    );
    expect(() => odataV4.collection({ d: { results: [] } })).toThrow(/no "value" array/);
  });
  it('reads the error message as a string, where V2 has {lang, value}', () => {
    const body = { error: { code: '/IWBEP/CM_V4S_RUN/000', message: 'Resource not found' } };
    expect(odataV4.errorMessage(body)).toBe('Resource not found');
    expect(odataV4.errorMessage({ error: { message: { lang: 'en', value: 'x' } } })).toBe('');
  });
  it('addresses the V4 entity and entity set, key quoted and escaped', () => {
    expect(odataV4.entityPath("A'B")).toBe(
      "/sap/opu/odata4/sap/api_salesorder/srvd_a2x/sap/salesorder/0001/SalesOrder('A''B')",
    );
    expect(odataV4.collectionPath).toBe(
      '/sap/opu/odata4/sap/api_salesorder/srvd_a2x/sap/salesorder/0001/SalesOrder',
    );
  });
});
