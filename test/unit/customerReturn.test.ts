// Mapping a customer return from either API version, and the warranty case it becomes, against the hand-made
// fixtures in the repository (customerReturnSamples.test.ts does the same with the real sandbox records).
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/errors.js';
import { type CustomerReturn, toCustomerReturn } from '../../src/families/customerReturn/entity.js';
import {
  customerReturnV2,
  customerReturnV4,
  type ReturnService,
} from '../../src/families/customerReturn/services.js';
import {
  CASE_STATUSES,
  caseStatusOf,
  toWarrantyCase,
  whenReturnMissing,
} from '../../src/families/customerReturn/state.js';
import { UnexpectedResponseError } from '../../src/s4/odataEntity.js';
import { returnV2Body, returnV4Body } from '../fixtures/customerReturn.js';

const map = (service: ReturnService, body: unknown, key: string) =>
  toCustomerReturn(service.entity(body), key, service);
const v2 = (body: unknown, key = '60000123') => map(customerReturnV2, body, key);
const v4 = (body: unknown, key = '60000123') => map(customerReturnV4, body, key);

const FIXTURE: CustomerReturn = {
  customerReturn: '60000123',
  customerReturnType: 'CBAR',
  soldToParty: '17100002',
  customerReference: 'RMA-CITYCAB-7731',
  orderReason: '009',
  referenceSDDocument: '1000473',
  referenceSDDocumentCategory: 'C',
  overallSDProcessStatus: 'B',
  rejectionStatus: 'A',
  returnsProcessingStatus: '1',
  creationDate: '2025-12-01',
  changedAt: new Date('2025-12-01T10:00:00Z'),
  items: [
    {
      customerReturnItem: '10',
      returnReason: '103',
      returnsRefundType: '',
      followUpActivity: '0001',
      referenceSDDocument: '1000473',
      referenceSDDocumentItem: '10',
      material: 'MZ-FG-E15',
    },
    {
      customerReturnItem: '20',
      returnReason: '003',
      returnsRefundType: 'C',
      followUpActivity: '0003',
      referenceSDDocument: '1000473',
      referenceSDDocumentItem: '20',
      material: 'MZ-FG-C990',
    },
  ],
};

describe('mapping A_CustomerReturn (V2) and CustomerReturn (V4)', () => {
  it('maps the V2 header and its expanded items, trimming text and reading V2 times', () => {
    expect(v2(returnV2Body())).toEqual(FIXTURE);
  });

  it("maps the V4 header the same way, V4's Product standing for V2's Material", () => {
    expect(v4(returnV4Body())).toEqual({ ...FIXTURE, changedAt: new Date('2025-12-01T10:00:00.123Z') });
  });

  it('maps nulls to null or blank, and a return without items to none', () => {
    const mapped = v2(
      returnV2Body({
        SoldToParty: null,
        PurchaseOrderByCustomer: '  ',
        OverallSDProcessStatus: null,
        LastChangeDateTime: null,
        to_Item: { results: [] },
      }),
    );
    expect(mapped).toMatchObject({ soldToParty: null, customerReference: null, overallSDProcessStatus: '' });
    expect(mapped.changedAt).toBeNull();
    expect(mapped.items).toEqual([]);
  });

  it('refuses, transient, an answer for another return, or without its items expanded or complete', () => {
    const failures = [
      () => v2(returnV2Body({ CustomerReturn: '1' })),
      () => v4(returnV4Body({ CustomerReturn: '1' })),
      () => v2(returnV2Body({ to_Item: { __deferred: { uri: "A_CustomerReturn('60000123')/to_Item" } } })),
      () => v2(returnV2Body({ to_Item: { results: [], __next: 'A_CustomerReturn?$skiptoken=1' } })),
      () => v4(returnV4Body({ _Item: undefined })),
      () => v4(returnV4Body({ '_Item@odata.nextLink': "CustomerReturn('60000123')/_Item?$skiptoken=1" })),
      () => v2(returnV2Body({ to_Item: { results: ['10'] } })),
    ];
    const messages = failures.map((read) => {
      try {
        read();
      } catch (err) {
        expect(err).toBeInstanceOf(UnexpectedResponseError);
        expect(classify(err)).toBe('transient');
        return (err as Error).message;
      }
      return 'mapped';
    });
    expect(messages).toEqual([
      'response is for customer return "1"',
      'response is for customer return "1"',
      'response has no "to_Item.results" array',
      'response pages the items of a return',
      'response has no "_Item" array: items not expanded',
      'response pages the items of a return',
      'response has no item object in "to_Item.results"',
    ]);
  });

  it('addresses each version with the key quoted, escaped and encoded, selecting what is mapped', () => {
    expect(customerReturnV2.entityPath("6'0 1")).toBe(
      "/sap/opu/odata/sap/API_CUSTOMER_RETURN_SRV/A_CustomerReturn('6''0%201')",
    );
    expect(customerReturnV4.entityPath('60000000')).toBe(
      "/sap/opu/odata4/sap/api_customerreturn/srvd_a2x/sap/customerreturn/0001/CustomerReturn('60000000')",
    );
    expect(customerReturnV2.query.$expand).toBe('to_Item');
    expect(customerReturnV2.query.$select).toContain(',to_Item/ReturnReason,');
    expect(customerReturnV2.query.$select).toContain('to_Item/Material');
    expect(customerReturnV4.query.$expand).toMatch(
      /^_Item\(\$select=CustomerReturnItem,ReturnReason,.*,Product\)$/,
    );
  });
});

describe('the warranty case of a return', () => {
  const status = (overallSDProcessStatus: string, rejectionStatus = '') =>
    caseStatusOf({ ...FIXTURE, overallSDProcessStatus, rejectionStatus });

  it('is Open, InProcess or Completed by the process status, and Rejected when all is rejected', () => {
    expect([status('A'), status('B'), status('C')]).toEqual(['Open', 'InProcess', 'Completed']);
    expect([status('A', 'C'), status('B', 'C'), status('C', 'C')]).toEqual([
      'Rejected',
      'Rejected',
      'Rejected',
    ]);
    expect([status('B', 'A'), status('B', 'B')]).toEqual(['InProcess', 'InProcess']);
    expect(status('')).toBe('Open');
  });

  it("lists the header's and the items' reasons once each, sorted, blanks left out", () => {
    const items = FIXTURE.items.map((item) => ({ ...item, returnReason: '009' }));
    expect(toWarrantyCase(FIXTURE, new Date()).returnReasons).toEqual(['003', '009', '103']);
    expect(toWarrantyCase({ ...FIXTURE, items }, new Date()).returnReasons).toEqual(['009']);
    expect(toWarrantyCase({ ...FIXTURE, orderReason: '', items: [] }, new Date()).returnReasons).toEqual([]);
  });

  it('refers to a sales order only when the reference is one (category C) with a well-formed key', () => {
    const salesOrder = (referenceSDDocumentCategory: string, referenceSDDocument = '90000001') =>
      toWarrantyCase({ ...FIXTURE, referenceSDDocument, referenceSDDocumentCategory }, new Date()).salesOrder;
    expect(salesOrder('C')).toBe('90000001');
    expect(salesOrder('M')).toBeNull();
    expect(salesOrder('')).toBeNull();
    expect(salesOrder('C', '')).toBeNull();
    expect(salesOrder('C', '9000\r\nBcc: x')).toBeNull();
  });

  it('is withdrawn when the return is gone after Deleted, and waits a bounded time after Created or Changed', () => {
    expect(whenReturnMissing('deleted', 0)).toBe('withdrawn');
    expect(whenReturnMissing('created', 0, 60_000)).toBe('retry');
    expect(whenReturnMissing('changed', 59_999, 60_000)).toBe('retry');
    expect(whenReturnMissing('changed', 60_000, 60_000)).toBe('not_found');
    expect(whenReturnMissing('created', Number.POSITIVE_INFINITY)).toBe('not_found');
    expect(whenReturnMissing('created', 0, 60_000, true)).toBe('not_found');
    expect(whenReturnMissing('deleted', 0, 60_000, true)).toBe('withdrawn');
  });

  it('has exactly the statuses the warranty_case table accepts', async () => {
    const sql = await readFile(
      new URL('../../db/migrations/0011_warranty_case.sql', import.meta.url),
      'utf8',
    );
    const accepted = /check \(case_status in \(([^)]*)\)\)/.exec(sql)?.[1];
    expect(accepted?.split(',').map((status) => status.trim().replaceAll("'", ''))).toEqual([
      ...CASE_STATUSES,
    ]);
  });
});
