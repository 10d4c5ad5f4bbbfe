// The customer-return events this service handles, and the return each names. Pure: no I/O, never throws.
// S/4HANA publishes one type per change of a return; a change of one of its items is a change of the return.
import { type Failure, fail, show } from '../../events/reasonText.js';

export const CUSTOMER_RETURN_TYPE_PREFIX = 'sap.s4.beh.customerreturn.v1.CustomerReturn.';

/** What an event says happened to its return. */
export type ReturnChange = 'created' | 'changed' | 'deleted';

const CHANGES: Readonly<Record<string, ReturnChange>> = {
  [`${CUSTOMER_RETURN_TYPE_PREFIX}Created.v1`]: 'created',
  [`${CUSTOMER_RETURN_TYPE_PREFIX}Changed.v1`]: 'changed',
  [`${CUSTOMER_RETURN_TYPE_PREFIX}Deleted.v1`]: 'deleted',
  [`${CUSTOMER_RETURN_TYPE_PREFIX}ItemCreated.v1`]: 'changed',
  [`${CUSTOMER_RETURN_TYPE_PREFIX}ItemChanged.v1`]: 'changed',
  [`${CUSTOMER_RETURN_TYPE_PREFIX}ItemDeleted.v1`]: 'changed',
};

/** Every customer-return type handled: what the brokers' subscriptions list. */
export const CUSTOMER_RETURN_TYPES: readonly string[] = Object.keys(CHANGES);

export const CUSTOMER_RETURN_KEY = /^[A-Za-z0-9]{1,10}$/;

export interface ReturnEvent {
  /** The return's key as S/4HANA's API writes it: trimmed, an all-digit key without leading zeros. */
  customerReturn: string;
  change: ReturnChange;
}

/** Whether `type` belongs to the customer-return family, handled or not. */
export function isCustomerReturnType(type: string): boolean {
  return type.startsWith(CUSTOMER_RETURN_TYPE_PREFIX);
}

/** What an event of `type` says happened to its return; undefined for a type not handled. */
export function returnChangeOf(type: string): ReturnChange | undefined {
  return Object.hasOwn(CHANGES, type) ? CHANGES[type] : undefined;
}

/** The return a customer-return event names and what happened to it, or why the event is refused. */
export function customerReturnEvent(type: string, data: unknown): ({ ok: true } & ReturnEvent) | Failure {
  const change = returnChangeOf(type);
  if (change === undefined)
    return fail(`event type ${show(type)} is not a customer-return event handled here`);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return fail(`data must be a JSON object, got ${show(data)}`);
  }
  const raw = Object.hasOwn(data, 'CustomerReturn')
    ? (data as Record<string, unknown>).CustomerReturn
    : undefined;
  const customerReturn = customerReturnKey(raw);
  if (customerReturn === undefined) {
    return fail(`data.CustomerReturn must be 1 to 10 letters or digits, got ${show(raw)}`);
  }
  return { ok: true, customerReturn, change };
}

/**
 * The key as the API writes it, or undefined when it is none: events may carry the internal form with leading
 * zeros (`0060000000`), the API and every table hold `60000000`, so one return has one key everywhere.
 */
export function customerReturnKey(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  const key = /^\d+$/.test(trimmed) ? trimmed.replace(/^0+/, '') : trimmed;
  return CUSTOMER_RETURN_KEY.test(key) ? key : undefined;
}
