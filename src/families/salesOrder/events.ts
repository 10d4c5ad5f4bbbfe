// The sales-order events this service handles, and the order each names. Pure: no I/O, never throws.
import { type Failure, fail, show } from '../../events/reasonText.js';

export const SALES_ORDER_TYPE_PREFIX = 'sap.s4.beh.salesorder.v1.SalesOrder.';
export const SALES_ORDER_KEY = /^[A-Za-z0-9]{1,10}$/;

/** Whether `type` belongs to the sales-order family: every type of it is handled. */
export function isSalesOrderType(type: string): boolean {
  return type.startsWith(SALES_ORDER_TYPE_PREFIX);
}

/** The order a sales-order event names, as given (it goes into an OData key), or why the event is refused. */
export function salesOrderKey(_type: string, data: unknown): { ok: true; key: string } | Failure {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return fail(`data must be a JSON object, got ${show(data)}`);
  }
  const key = Object.hasOwn(data, 'SalesOrder') ? (data as Record<string, unknown>).SalesOrder : undefined;
  if (typeof key !== 'string' || !SALES_ORDER_KEY.test(key)) {
    return fail(`data.SalesOrder must be 1 to 10 letters or digits, got ${show(key)}`);
  }
  return { ok: true, key };
}
