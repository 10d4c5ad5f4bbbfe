// What the portal is told of a delivery: `PUT <portal>/outbound-deliveries/<delivery>` with its absolute values.
import { contentOf } from '../../../src/db/content.js';
import type { ClaimedPush } from '../../../src/portal/pushOutbox.js';

export const deliveryPath = (delivery: string) => `/outbound-deliveries/${encodeURIComponent(delivery)}`;

export function deliveryBody(push: Pick<ClaimedPush, 'key' | 'content'>) {
  const content = contentOf(`portal push of outbound delivery ${push.key}`, push.content);
  return {
    deliveryDocument: content.text('deliveryDocument'),
    status: content.text('status'),
    s4ChangedAt: content.optionalText('s4ChangedAt'),
  };
}
