import { describe, expect, it } from 'vitest';
import { toSalesOrder as mapEntity } from '../../src/families/salesOrder/entity.js';
import { odataV2 } from '../../src/families/salesOrder/services.js';
import { UnexpectedResponseError } from '../../src/s4/odataEntity.js';
import { parseODataDate } from '../../src/s4/odataV2.js';

const toSalesOrder = (body: unknown, key: string) => mapEntity(odataV2.entity(body), key, odataV2.time);

const entity = (fields: Record<string, unknown> = {}) => ({
  d: {
    __metadata: { type: 'API_SALES_ORDER_SRV.A_SalesOrderType' },
    SalesOrder: '1000473',
    SoldToParty: '17100001',
    PurchaseOrderByCustomer: 'PO 4711 ',
    RequestedDeliveryDate: '/Date(1765756800000)/',
    LastChangeDateTime: '/Date(1764496800000+0000)/',
    OverallSDProcessStatus: 'B',
    OverallTotalDeliveryStatus: 'A',
    OverallDeliveryStatus: 'B',
    OverallSDDocumentRejectionSts: '',
    DeliveryBlockReason: '',
    TotalNetAmount: '1234.50',
    TransactionCurrency: 'EUR',
    ...fields,
  },
});

describe('OData V2 dates', () => {
  it('reads Edm.DateTime and Edm.DateTimeOffset as UTC milliseconds', () => {
    expect(parseODataDate('/Date(1765756800000)/')?.toISOString()).toBe('2025-12-15T00:00:00.000Z');
    expect(parseODataDate('/Date(1764496800000+0000)/')?.toISOString()).toBe('2025-11-30T10:00:00.000Z');
    expect(parseODataDate('/Date(1764496800000+0120)/')?.toISOString()).toBe('2025-11-30T10:00:00.000Z');
  });
  it('reads null and empty as no date', () => {
    expect(parseODataDate(null)).toBeNull();
    expect(parseODataDate('')).toBeNull();
  });
  it('refuses anything else', () => {
    expect(() => parseODataDate('2025-12-15')).toThrow(UnexpectedResponseError);
  });
});

describe('mapping A_SalesOrder', () => {
  it('maps the fields the portal needs, trimming text and formatting the requested date', () => {
    expect(toSalesOrder(entity(), '1000473')).toEqual({
      salesOrder: '1000473',
      soldToParty: '17100001',
      customerReference: 'PO 4711',
      requestedDeliveryDate: '2025-12-15',
      changedAt: new Date('2025-11-30T10:00:00Z'),
      overallSDProcessStatus: 'B',
      deliveryStatus: 'B',
      rejectionStatus: '',
      deliveryBlockReason: '',
    });
  });
  it('uses OverallTotalDeliveryStatus on releases without OverallDeliveryStatus', () => {
    const { d } = entity({ OverallTotalDeliveryStatus: 'C' });
    const { OverallDeliveryStatus: _, ...older } = d;
    expect(toSalesOrder({ d: older }, '1000473').deliveryStatus).toBe('C');
  });
  it('prefers OverallDeliveryStatus, even when blank, where the release has it', () => {
    expect(
      toSalesOrder(entity({ OverallDeliveryStatus: '', OverallTotalDeliveryStatus: 'C' }), '1000473')
        .deliveryStatus,
    ).toBe('');
  });
  it('maps null values to null or blank', () => {
    const order = toSalesOrder(
      entity({ RequestedDeliveryDate: null, PurchaseOrderByCustomer: null, OverallSDProcessStatus: null }),
      '1000473',
    );
    expect(order.requestedDeliveryDate).toBeNull();
    expect(order.customerReference).toBeNull();
    expect(order.overallSDProcessStatus).toBe('');
  });
  it('refuses a body without "d" or for another order', () => {
    expect(() => toSalesOrder({ value: [] }, '1000473')).toThrow(/no "d" object/);
    expect(() => toSalesOrder(entity({ SalesOrder: '1' }), '1000473')).toThrow(/for sales order "1"/);
  });
});
