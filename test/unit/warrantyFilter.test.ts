// Which customer returns are warranty cases (WARRANTY_RETURN_REASONS), and how the list is read.
import { describe, expect, it } from 'vitest';
import { envReader } from '../../src/config/envReader.js';
import { loadConfig } from '../../src/config/loadConfig.js';
import { warrantyReturnReasons } from '../../src/config/warrantyConfig.js';
import type { CustomerReturn } from '../../src/families/customerReturn/entity.js';
import { isWarrantyCase } from '../../src/families/customerReturn/warrantyFilter.js';

const item = (returnReason: string) => ({
  customerReturnItem: '10',
  returnReason,
  returnsRefundType: '',
  followUpActivity: '',
  referenceSDDocument: '',
  referenceSDDocumentItem: '',
  material: '',
});
const customerReturn = (orderReason: string, itemReasons: string[]): CustomerReturn => ({
  customerReturn: '60000000',
  customerReturnType: 'CBAR',
  soldToParty: null,
  customerReference: null,
  orderReason,
  referenceSDDocument: '',
  referenceSDDocumentCategory: '',
  overallSDProcessStatus: 'A',
  rejectionStatus: '',
  returnsProcessingStatus: '',
  creationDate: null,
  changedAt: null,
  items: itemReasons.map(item),
});

describe('the warranty filter', () => {
  const reasons = new Set(['103', 'W01']);

  it("matches the header's SDDocumentReason", () => {
    expect(isWarrantyCase(customerReturn('103', ['003']), reasons)).toBe(true);
  });

  it("matches any item's ReturnReason", () => {
    expect(isWarrantyCase(customerReturn('009', ['003', 'W01']), reasons)).toBe(true);
  });

  it('leaves out a return none of whose reasons is listed, and matches codes exactly', () => {
    expect(isWarrantyCase(customerReturn('009', ['003', '']), reasons)).toBe(false);
    expect(isWarrantyCase(customerReturn('', []), reasons)).toBe(false);
    expect(isWarrantyCase(customerReturn('w01', ['0103']), reasons)).toBe(false);
  });

  it('takes every return as a case when no list is configured', () => {
    expect(isWarrantyCase(customerReturn('', []), undefined)).toBe(true);
  });
});

describe('WARRANTY_RETURN_REASONS', () => {
  const read = (value: string | undefined) => {
    const reader = envReader({ WARRANTY_RETURN_REASONS: value });
    return { reasons: warrantyReturnReasons(reader), problems: reader.problems };
  };

  it('is a comma-separated list, items trimmed and empty ones dropped', () => {
    expect(read(' 103, W01 ,,009')).toEqual({ reasons: new Set(['103', 'W01', '009']), problems: [] });
  });

  it('unset or blank means every return is a case', () => {
    expect(read(undefined)).toEqual({ reasons: undefined, problems: [] });
    expect(read('  ')).toEqual({ reasons: undefined, problems: [] });
  });

  it('reports a list without reasons, and reasons that no return can carry', () => {
    expect(read(',').problems).toEqual(['WARRANTY_RETURN_REASONS lists no return reason']);
    expect(read('103,1034,W 1').problems).toEqual([
      'WARRANTY_RETURN_REASONS takes return reasons of 1 to 3 letters or digits, got "1034", "W 1"',
    ]);
  });

  it('is read with the S/4HANA settings, and a wrong list fails the configuration', () => {
    const local = {
      DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
      INGEST: 'webhook',
      SMTP_URL: 'smtp://127.0.0.1:2525',
      MAIL_TO: 'a@example.com',
      AUTH: 'none',
    };
    expect(
      loadConfig({ ...local, WARRANTY_RETURN_REASONS: '103' }).customerReturn.warrantyReturnReasons,
    ).toEqual(new Set(['103']));
    expect(() => loadConfig({ ...local, WARRANTY_RETURN_REASONS: 'TOOLONG' })).toThrow(
      /WARRANTY_RETURN_REASONS takes return reasons of 1 to 3 letters or digits, got "TOOLONG"/,
    );
  });
});
