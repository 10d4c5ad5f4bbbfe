import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/loadConfig.js';
import type { FamilyCollection } from '../../src/families/familyModule.js';
import { FAMILIES } from '../../src/families/index.js';
import { odataV4 } from '../../src/families/salesOrder/services.js';
import { chooseMode } from '../../src/reconcile/chooseMode.js';
import { collectionProblem } from '../../src/reconcile/collection.js';
import { parseStamp, stampAt, stampLiteral, stampMinus, stampOf } from '../../src/reconcile/stamp.js';

const DAY = 86_400_000;

describe("S/4HANA's stamps", () => {
  it('take V2 stamps from the ETag at 7 digits, never from the millisecond JSON value', () => {
    const entity = {
      __metadata: { etag: `W/"datetimeoffset'2016-09-02T06%3A15%3A47.1257050Z'"` },
      LastChangeDateTime: '/Date(1472796947125+0000)/',
    };
    expect(stampOf('v2', entity)).toBe('2016-09-02T06:15:47.1257050Z');
    expect(stampOf('v2', { __metadata: {} })).toBeNull();
    expect(() => stampOf('v2', { __metadata: { etag: 'W/"SADL-1"' } })).toThrow(/ETag/);
  });

  it("take V4 stamps from the value, any digits and offset written as S/4HANA's 7-digit UTC text", () => {
    expect(stampOf('v4', { LastChangeDateTime: '2016-09-02T06:15:47.1257050Z' })).toBe(
      '2016-09-02T06:15:47.1257050Z',
    );
    expect(stampOf('v4', { LastChangeDateTime: '2016-09-02T08:15:47.12+02:00' })).toBe(
      '2016-09-02T06:15:47.1200000Z',
    );
    expect(stampOf('v4', { LastChangeDateTime: null })).toBeNull();
    expect(() => stampOf('v4', { LastChangeDateTime: '2016-09-02' })).toThrow(/LastChangeDateTime/);
    expect(parseStamp('2016-09-02T06:15:47.12345678Z')).toBeUndefined();
  });

  it('move back by whole milliseconds, keeping the digits below them, and order as text', () => {
    expect(stampMinus('2026-12-01T00:10:00.0004567Z', 15 * 60_000)).toBe('2026-11-30T23:55:00.0004567Z');
    expect(stampAt(Date.parse('2026-12-01T00:00:00.123Z'))).toBe('2026-12-01T00:00:00.1230000Z');
    expect('2026-12-01T00:00:00.1230001Z' > '2026-12-01T00:00:00.1230000Z').toBe(true);
  });

  it("are written in each version's literal", () => {
    expect(stampLiteral('v2', '2026-12-01T00:00:00.1230000Z')).toBe(
      "datetimeoffset'2026-12-01T00:00:00.1230000Z'",
    );
    expect(stampLiteral('v4', '2026-12-01T00:00:00.1230000Z')).toBe('2026-12-01T00:00:00.1230000Z');
  });
});

describe('the mode of a run', () => {
  const now = Date.parse('2026-12-10T12:00:00Z');
  const mark = (msAgo: number) => stampAt(now - msAgo);

  it('is a baseline without a mark', () => {
    expect(chooseMode(undefined, undefined, now)).toBe('baseline');
  });

  it('is a sweep when the mark is older than 8 days or no sweep completed within a day', () => {
    expect(chooseMode(mark(8 * DAY + 1), new Date(now - 60_000), now)).toBe('sweep');
    expect(chooseMode(mark(60_000), new Date(now - DAY), now)).toBe('sweep');
    expect(chooseMode(mark(60_000), undefined, now)).toBe('sweep');
  });

  it('is a delta otherwise', () => {
    expect(chooseMode(mark(7 * DAY), new Date(now - DAY + 1), now)).toBe('delta');
  });
});

describe("a family's collection", () => {
  const collection = (select: string | undefined) => ({
    family: 'salesOrder' as const,
    service: {
      ...odataV4,
      query: select === undefined ? ({} as Record<string, string>) : { $select: select },
    },
    openFilter: "OverallSDProcessStatus ne 'C'",
    map: (entity: Record<string, unknown>) => entity,
  });

  it('must select the key and LastChangeDateTime, which paging by key needs', () => {
    expect(collectionProblem(collection(undefined))).toBeUndefined();
    expect(collectionProblem(collection('SalesOrder,LastChangeDateTime,SoldToParty'))).toBeUndefined();
    expect(collectionProblem(collection('SoldToParty'))).toBe(
      'salesOrder: $select lacks SalesOrder and LastChangeDateTime, which paging by key needs',
    );
  });
});

describe("each family's collection", () => {
  it('can be paged by key and stamp in both API versions', () => {
    for (const version of ['v2', 'v4'] as const) {
      const config = {
        s4: { version },
        customerReturn: { warrantyReturnReasons: undefined },
      } as unknown as Config;
      const reconciled = FAMILIES.filter((family) => family.reconcile !== undefined);
      expect(reconciled.map((family) => family.name)).toEqual(['salesOrder', 'customerReturn']);
      for (const family of reconciled) {
        const collection = family.reconcile?.collection(config) as FamilyCollection<unknown>;
        expect(
          collectionProblem({ family: family.name, ...collection }),
          `${family.name} ${version}`,
        ).toBeUndefined();
      }
    }
  });
});
