// A test-only event family, outbound deliveries, as the shared path asks it (src/families/familyModule.ts): a
// third family that costs its folder and its own table, registered beside the service's own in
// test/integration/thirdFamily.test.ts.
import type { FamilyModule } from '../../../src/families/familyModule.js';
import { EXPIRED_SHIPPED } from './effect.js';
import { renderDeliveryEmail } from './email.js';
import { DELIVERY_TYPE_PREFIX, deliveryEvent, deliveryKey, isDeliveryType } from './events.js';
import { createDeliveryFamily } from './family.js';
import { deliveryOverview } from './overview.js';
import { deliveryBody, deliveryPath } from './pushResource.js';
import { DELIVERY_TIMELINE } from './timeline.js';

/** The family, reading deliveries from `destination`. */
export function outboundDelivery(destination: string): FamilyModule {
  return {
    name: 'outboundDelivery',
    label: 'outbound_delivery',
    logKey: 'deliveryDocument',
    spanKey: 'sap.outbound_delivery',
    owns: isDeliveryType,
    keyOf: deliveryEvent,
    create: (deps) => createDeliveryFamily(deps, destination),
    mail: () => ({ render: renderDeliveryEmail }),
    push: { request: (push) => ({ path: deliveryPath(push.key), body: deliveryBody(push) }) },
    admin: {
      lookup: '/api/outbound-deliveries',
      pushes: '/api/portal-pushes/outbound-deliveries',
      param: 'deliveryDocument',
      what: 'outbound delivery',
      keyPattern: /^\d{1,10}$/,
      normalise: (raw) => deliveryKey(raw) ?? raw,
      overview: deliveryOverview,
      timeline: DELIVERY_TIMELINE,
      console: {
        // The lookup's path below /api: the parked lists link to it.
        page: 'outbound-deliveries',
        label: 'Outbound delivery',
        example: '80000000',
        typePrefix: DELIVERY_TYPE_PREFIX,
        state: [['status', '']],
      },
    },
    expiries: [{ target: 'shippedDeliveries', cutoff: 'event', sql: EXPIRED_SHIPPED }],
  };
}
