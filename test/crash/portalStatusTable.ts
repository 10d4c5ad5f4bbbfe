// The portal status the crash suite expects, written from the status rules in docs/contracts.md (Portal table),
// not taken from the service: a wrong rule in the service then shows as a finding instead of being expected.
import type { SalesOrderState } from '../../sandbox/s4Server.js';

type Rule = (order: SalesOrderState, delivery: string) => boolean;

/** First rule that matches, in the contracts' order; none matching is Open. */
const RULES = [
  ['Rejected', (order) => order.rejectionStatus === 'C'],
  ['Delivered', (_, delivery) => delivery === 'C'],
  ['PartiallyDelivered', (_, delivery) => delivery === 'B'],
  ['DeliveryBlocked', (order) => (order.deliveryBlockReason ?? '') !== ''],
  ['InProcess', (order) => order.overallSDProcessStatus === 'B'],
] as const satisfies ReadonlyArray<readonly [string, Rule]>;

export type ExpectedStatus = (typeof RULES)[number][0] | 'Open';

export function expectedStatus(order: SalesOrderState): ExpectedStatus {
  // The delivery status, or the total one on releases without it.
  const delivery = order.overallDeliveryStatus ?? order.overallTotalDeliveryStatus ?? '';
  return RULES.find(([, applies]) => applies(order, delivery))?.[0] ?? 'Open';
}
