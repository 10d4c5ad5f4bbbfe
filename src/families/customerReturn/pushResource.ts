// What the fleet portal is told of a warranty case: `PUT <portal>/warranty-cases/<customerReturn>` with the
// case's absolute values, so a repeated PUT (same Idempotency-Key) is harmless. Pure; the push outbox sends it.
import { contentOf } from '../../db/content.js';
import type { ClaimedPush } from '../../portal/pushOutbox.js';

/** The body of the PUT: the contract, field for field. */
export interface WarrantyCaseBody {
  customerReturn: string;
  caseStatus: string;
  soldToParty: string | null;
  customerReference: string | null;
  salesOrder: string | null;
  returnReasons: string[];
  s4ChangedAt: string | null;
}

/** The resource's path below the portal's base URL, the key encoded. */
export function warrantyCasePath(customerReturn: string): string {
  return `/warranty-cases/${encodeURIComponent(customerReturn)}`;
}

/** The body a claimed row holds (effect.ts writes it), checked field by field. */
export function warrantyCaseBody(push: Pick<ClaimedPush, 'key' | 'content'>): WarrantyCaseBody {
  const content = contentOf(`portal push of customer return ${push.key}`, push.content);
  return {
    customerReturn: content.text('customerReturn'),
    caseStatus: content.text('caseStatus'),
    soldToParty: content.optionalText('soldToParty'),
    customerReference: content.optionalText('customerReference'),
    salesOrder: content.optionalText('salesOrder'),
    returnReasons: content.texts('returnReasons'),
    s4ChangedAt: content.optionalText('s4ChangedAt'),
  };
}
