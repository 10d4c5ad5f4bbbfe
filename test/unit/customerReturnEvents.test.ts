// The customer-return family's events on their own: which types are handled, what each means for its return,
// how the key is normalised, and the exact reason for everything refused.
import { describe, expect, it } from 'vitest';
import {
  CUSTOMER_RETURN_TYPE_PREFIX,
  CUSTOMER_RETURN_TYPES,
  customerReturnEvent,
  customerReturnKey,
  isCustomerReturnType,
} from '../../src/families/customerReturn/events.js';

const type = (name: string) => `sap.s4.beh.customerreturn.v1.CustomerReturn.${name}.v1`;

describe('customer-return event types', () => {
  it('handles Created, Changed and Deleted, and counts item events as changes of their return', () => {
    const changes = Object.fromEntries(
      ['Created', 'Changed', 'Deleted', 'ItemCreated', 'ItemChanged', 'ItemDeleted'].map((name) => {
        const result = customerReturnEvent(type(name), { CustomerReturn: '60000000' });
        return [name, result.ok ? result.change : result.reason];
      }),
    );
    expect(changes).toEqual({
      Created: 'created',
      Changed: 'changed',
      Deleted: 'deleted',
      ItemCreated: 'changed',
      ItemChanged: 'changed',
      ItemDeleted: 'changed',
    });
    expect([...CUSTOMER_RETURN_TYPES].sort()).toEqual(
      ['Created', 'Changed', 'Deleted', 'ItemCreated', 'ItemChanged', 'ItemDeleted'].map(type).sort(),
    );
  });

  it('refuses any other customer-return type with a reason naming it', () => {
    for (const other of [
      type('Released'),
      type('Created').replace(/\.v1$/, '.v2'),
      `${CUSTOMER_RETURN_TYPE_PREFIX}`,
    ]) {
      expect(isCustomerReturnType(other)).toBe(true);
      expect(customerReturnEvent(other, { CustomerReturn: '60000000' })).toEqual({
        ok: false,
        reason: `event type ${JSON.stringify(other)} is not a customer-return event handled here`,
      });
    }
  });

  it('does not take sales-order or look-alike types for customer returns', () => {
    expect(isCustomerReturnType('sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1')).toBe(false);
    expect(isCustomerReturnType('sap.s4.beh.customerreturn.v1.CustomerReturnX.Changed.v1')).toBe(false);
    expect(customerReturnEvent('sap.s4.beh.customerreturn.v1.Created.v1', {}).ok).toBe(false);
  });

  it('refuses data that is not a JSON object', () => {
    expect(customerReturnEvent(type('Changed'), ['60000000'])).toEqual({
      ok: false,
      reason: 'data must be a JSON object, got ["60000000"]',
    });
    expect(customerReturnEvent(type('Changed'), undefined)).toEqual({
      ok: false,
      reason: 'data must be a JSON object, got nothing',
    });
  });
});

describe('the customer-return key', () => {
  it('is trimmed, and an all-digit key loses its leading zeros', () => {
    expect(customerReturnKey('0060000000')).toBe('60000000');
    expect(customerReturnKey(' 60000000\t')).toBe('60000000');
    expect(customerReturnKey('  0000000001 ')).toBe('1');
    expect(customerReturnEvent(type('Created'), { CustomerReturn: '0060000000' })).toEqual({
      ok: true,
      customerReturn: '60000000',
      change: 'created',
    });
  });

  it('keeps the zeros of a key with letters, and keys of 1 to 10 letters or digits as they are', () => {
    expect(customerReturnKey('00R6000000')).toBe('00R6000000');
    expect(customerReturnKey('R1')).toBe('R1');
    expect(customerReturnKey('6000000001')).toBe('6000000001');
  });

  it('measures the length after the zeros are gone', () => {
    expect(customerReturnKey('000000000060000000')).toBe('60000000');
    expect(customerReturnKey('60000000001')).toBeUndefined();
    expect(customerReturnKey('R600000000X')).toBeUndefined();
  });

  it('refuses a missing, empty, all-zero, non-text or non-alphanumeric key with the value it got', () => {
    const reason = (data: unknown) => {
      const result = customerReturnEvent(type('Changed'), data);
      return result.ok ? undefined : result.reason;
    };
    const expected = (shown: string) => `data.CustomerReturn must be 1 to 10 letters or digits, got ${shown}`;
    expect(reason({})).toBe(expected('nothing'));
    expect(reason({ CustomerReturn: '' })).toBe(expected('""'));
    expect(reason({ CustomerReturn: '   ' })).toBe(expected('"   "'));
    expect(reason({ CustomerReturn: '0000000000' })).toBe(expected('"0000000000"'));
    expect(reason({ CustomerReturn: 60000000 })).toBe(expected('60000000'));
    expect(reason({ CustomerReturn: "6000'0" })).toBe(expected('"6000\'0"'));
    expect(reason({ CustomerReturn: '6000 0000' })).toBe(expected('"6000 0000"'));
    expect(reason({ CustomerReturn: '6000\u200b0000' })).toBe(expected('"6000?0000"'));
    expect(reason({ SalesOrder: '60000000' })).toBe(expected('nothing'));
  });

  it("reads only the data object's own key", () => {
    const inherited = Object.create({ CustomerReturn: '60000000' }) as object;
    expect(customerReturnEvent(type('Changed'), inherited).ok).toBe(false);
  });
});
