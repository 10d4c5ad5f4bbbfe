// The customer-return reader against the S/4HANA stand-in over real HTTP, in both API versions: single reads,
// collection reads (alone and gathered by the batching), 404, and the failure kinds as for sales orders.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CustomerReturnState } from '../../sandbox/s4Returns.js';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import { classify } from '../../src/errors.js';
import { type CustomerReturnApi, createCustomerReturnApi } from '../../src/families/customerReturn/api.js';
import { toWarrantyCase } from '../../src/families/customerReturn/state.js';
import { batchReads } from '../../src/s4/batchedReads.js';
import { createDestinationLimit } from '../../src/s4/destinationLimit.js';
import { registerDestination } from '../support/destination.js';
import { returnState } from '../support/returns.js';

let s4: S4Server;
let destination: string;

beforeAll(async () => {
  s4 = await startS4Server();
  destination = registerDestination(s4.url);
});
afterAll(async () => {
  await s4.close();
});

const RETURN: CustomerReturnState = returnState('60000001', {
  overallSDProcessStatus: 'B',
  items: [
    { customerReturnItem: '10', returnReason: '103', material: 'MZ-FG-E15', referenceSDDocumentItem: '10' },
    { customerReturnItem: '20', returnReason: '003', returnsRefundType: 'C', followUpActivity: '0003' },
  ],
});

async function failure(
  promise: Promise<unknown>,
): Promise<Error & { status?: number; retryAfterMs?: number }> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the read to fail');
}

describe.each(['v2', 'v4'] as const)('reading customer returns over %s', (version) => {
  let api: CustomerReturnApi;

  beforeAll(() => {
    api = createCustomerReturnApi({ destination, timeoutMs: 1000, version });
  });
  afterEach(() => {
    s4.returns.setFault(undefined);
  });

  it('maps the current return with its items from one read', async () => {
    s4.returns.setReturn(RETURN);
    const read = await api.read('60000001');
    expect(read).toMatchObject({
      customerReturn: '60000001',
      customerReturnType: 'CBAR',
      soldToParty: '17100002',
      customerReference: 'RMA 7731',
      orderReason: '009',
      overallSDProcessStatus: 'B',
      changedAt: new Date('2026-11-30T10:00:00Z'),
      items: [
        {
          customerReturnItem: '10',
          returnReason: '103',
          material: 'MZ-FG-E15',
          referenceSDDocument: '1000473',
        },
        { customerReturnItem: '20', returnReason: '003', returnsRefundType: 'C', followUpActivity: '0003' },
      ],
    });
    expect(read && toWarrantyCase(read, new Date())).toMatchObject({
      caseStatus: 'InProcess',
      salesOrder: '1000473',
      returnReasons: ['003', '009', '103'],
    });
    expect(s4.returns.requestLog().at(-1)).toEqual({
      api: version,
      collection: false,
      customerReturns: ['60000001'],
    });
  });

  it('answers null for a return S/4HANA does not have, and after it was deleted', async () => {
    expect(await api.read('69999999')).toBeNull();
    s4.returns.setReturn({ ...RETURN, customerReturn: '60000002' });
    s4.returns.deleteReturn('60000002');
    expect(await api.read('60000002')).toBeNull();
  });

  it('reads several returns in one collection request, a missing one answered as null', async () => {
    s4.returns.setReturn({ ...RETURN, customerReturn: '60000003', overallSDProcessStatus: 'C' });
    s4.returns.setReturn({ ...RETURN, customerReturn: "R'4", items: [] });
    const before = s4.returns.requestLog().length;
    const results = await api.readMany(['60000003', "R'4", '69999998']);
    expect(s4.returns.requestLog().slice(before)).toEqual([
      { api: version, collection: true, customerReturns: ['60000003', "R'4", '69999998'] },
    ]);
    expect([...results.keys()]).toEqual(['60000003', "R'4", '69999998']);
    const read = (key: string) => {
      const result = results.get(key);
      return result !== undefined && 'document' in result ? result.document : result;
    };
    expect(read('60000003')).toMatchObject({ overallSDProcessStatus: 'C', items: [{}, {}] });
    expect(read("R'4")).toMatchObject({ customerReturn: "R'4", items: [] });
    expect(read('69999998')).toBeNull();
  });

  it('gathers the reads of a burst into one collection request through the batching', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => String(61000000 + i));
    for (const key of keys) s4.returns.setReturn({ ...RETURN, customerReturn: key });
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => void warnings.push(args) };
    const readReturn = batchReads(api, {
      destination: createDestinationLimit({ maxConcurrent: 1 }),
      batchSize: 50,
      maxWaitMs: 5000,
      logger,
    });
    const before = s4.returns.requestLog().length;
    const reads = await Promise.all(keys.map((key) => readReturn(key)));
    expect(reads.map((read) => read.document?.customerReturn)).toEqual(keys);
    // Asked for in the same turn, all go out together as one collection read.
    expect(s4.returns.requestLog().slice(before)).toEqual([
      { api: version, collection: true, customerReturns: keys },
    ]);
    expect(warnings).toEqual([]);
  });

  it('reports 503 and 429 with their status and Retry-After, and 500, classified transient', async () => {
    s4.returns.setReturn({ ...RETURN, customerReturn: '65030001' });
    for (const [fault, status] of [
      ['unavailable', 503],
      ['tooMany', 429],
      ['error500', 500],
    ] as const) {
      s4.returns.setFault(() => fault);
      for (const read of [() => api.read('65030001'), () => api.readMany(['65030001', '65030002'])]) {
        const err = await failure(read());
        expect(err.status).toBe(status);
        expect(err.retryAfterMs).toBe(status === 429 ? 1000 : undefined);
        expect(classify(err)).toBe('transient');
      }
    }
  });

  it('gives up on a hanging read after the timeout, classified transient', async () => {
    s4.returns.setFault(() => 'hang');
    const err = await failure(
      createCustomerReturnApi({ destination, timeoutMs: 200, version }).read('65040001'),
    );
    expect((err.cause as { code?: string }).code).toBe('ECONNABORTED');
    expect(classify(err)).toBe('transient');
  });
});

describe('the stand-in, as S/4HANA would', () => {
  it('refuses a $select naming a property the entity type lacks, as SAP does', async () => {
    const response = await fetch(
      `${s4.url}/sap/opu/odata/sap/API_CUSTOMER_RETURN_SRV/A_CustomerReturn('60000001')?$select=CustomerReturn,OverallDeliveryStatus&$format=json`,
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        code: '/IWBEP/CM_MGW_RT/022',
        message: {
          lang: 'en',
          value: "Property 'OverallDeliveryStatus' not found in type 'A_CustomerReturnType'",
        },
      },
    });
  });

  it('defers the V2 items unless they are expanded', async () => {
    s4.returns.setReturn(RETURN);
    const response = await fetch(
      `${s4.url}/sap/opu/odata/sap/API_CUSTOMER_RETURN_SRV/A_CustomerReturn('60000001')?$format=json`,
    );
    const body = (await response.json()) as { d: { to_Item: unknown } };
    expect(body.d.to_Item).toEqual({
      __deferred: {
        uri: `${s4.url}/sap/opu/odata/sap/API_CUSTOMER_RETURN_SRV/A_CustomerReturn('60000001')/to_Item`,
      },
    });
  });
});
