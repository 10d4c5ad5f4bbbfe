// The customer-return mappings and the warranty case against the real sandbox records of return 60000000 and
// its item 10 (shared/real-samples/returns), written as each API version answers them.
import { describe, expect, it } from 'vitest';
import { type CustomerReturn, toCustomerReturn } from '../../src/families/customerReturn/entity.js';
import {
  customerReturnV2,
  customerReturnV4,
  type ReturnService,
} from '../../src/families/customerReturn/services.js';
import { toWarrantyCase } from '../../src/families/customerReturn/state.js';
import { REAL as REAL_SAMPLES } from '../support/realSamples.js';
import { realReturnBody } from '../support/returnSamples.js';

const map = (service: ReturnService, body: unknown, key: string) =>
  toCustomerReturn(service.entity(body), key, service);
const v2 = (body: unknown, key: string) => map(customerReturnV2, body, key);
const v4 = (body: unknown, key: string) => map(customerReturnV4, body, key);

/** The real sandbox return `60000000` with its item 10, as both versions must map it. */
const REAL: CustomerReturn = {
  customerReturn: '60000000',
  customerReturnType: 'CBAR',
  soldToParty: 'USCU-CUS07',
  customerReference: 'Returns',
  orderReason: '009',
  referenceSDDocument: '348',
  referenceSDDocumentCategory: 'C',
  overallSDProcessStatus: 'C',
  rejectionStatus: 'A',
  returnsProcessingStatus: '0',
  creationDate: '2016-09-20',
  changedAt: null,
  items: [
    {
      customerReturnItem: '10',
      returnReason: '003',
      returnsRefundType: '',
      followUpActivity: '0001',
      referenceSDDocument: '348',
      referenceSDDocumentItem: '10',
      material: 'MZ-FG-E15',
    },
  ],
};

describe('the real customer-return samples', REAL_SAMPLES.options, () => {
  describe('the real sandbox return', () => {
    it('maps the real sandbox return alike from both versions', () => {
      expect(v2(realReturnBody('v2'), '60000000')).toEqual(REAL);
      expect(v4(realReturnBody('v4'), '60000000')).toEqual(REAL);
    });

    it('maps the real sandbox return to a completed case of its sales order, from both versions', () => {
      const readAt = new Date('2026-12-06T05:00:00Z');
      for (const version of ['v2', 'v4'] as const) {
        const service = version === 'v2' ? customerReturnV2 : customerReturnV4;
        expect(toWarrantyCase(map(service, realReturnBody(version), '60000000'), readAt)).toEqual({
          customerReturn: '60000000',
          caseStatus: 'Completed',
          soldToParty: 'USCU-CUS07',
          customerReference: 'Returns',
          salesOrder: '348',
          returnReasons: ['003', '009'],
          changedAt: null,
          readAt,
        });
      }
    });
  });
});
