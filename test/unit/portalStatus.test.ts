import { describe, expect, it } from 'vitest';
import { portalStatusOf } from '../../src/families/salesOrder/state.js';
import { salesOrderOf as order } from '../fixtures/salesOrder.js';

describe('portal status rules, first match wins', () => {
  it('is Rejected when the order is fully rejected, whatever else holds', () => {
    expect(
      portalStatusOf(order({ rejectionStatus: 'C', deliveryStatus: 'C', deliveryBlockReason: '01' })),
    ).toBe('Rejected');
  });
  it('is not Rejected when only partly rejected', () => {
    expect(portalStatusOf(order({ rejectionStatus: 'B' }))).toBe('Open');
  });
  it('is Delivered when fully delivered, even if a delivery block is set', () => {
    expect(portalStatusOf(order({ deliveryStatus: 'C', deliveryBlockReason: '01' }))).toBe('Delivered');
  });
  it('is PartiallyDelivered when partly delivered', () => {
    expect(portalStatusOf(order({ deliveryStatus: 'B', overallSDProcessStatus: 'B' }))).toBe(
      'PartiallyDelivered',
    );
  });
  it('is DeliveryBlocked when a block reason is set and nothing is delivered', () => {
    expect(portalStatusOf(order({ deliveryBlockReason: '01', overallSDProcessStatus: 'B' }))).toBe(
      'DeliveryBlocked',
    );
  });
  it('is InProcess when processing has started', () => {
    expect(portalStatusOf(order({ overallSDProcessStatus: 'B' }))).toBe('InProcess');
  });
  it('is Open otherwise, including blank (not relevant) statuses', () => {
    expect(portalStatusOf(order({ overallSDProcessStatus: '' }))).toBe('Open');
    expect(portalStatusOf(order({ overallSDProcessStatus: 'C', deliveryStatus: 'A' }))).toBe('Open');
  });
});
