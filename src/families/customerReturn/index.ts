// The customer-return family as the shared path asks it (../familyModule.ts).
import type { FamilyModule } from '../familyModule.js';
import { customerReturnCollection, openCaseKeys } from './collection.js';
import { EXPIRED_TOMBSTONES } from './effect.js';
import { caseMailOf, renderCaseEmail } from './email.js';
import {
  CUSTOMER_RETURN_KEY,
  CUSTOMER_RETURN_TYPE_PREFIX,
  customerReturnEvent,
  customerReturnKey,
  isCustomerReturnType,
} from './events.js';
import { createCustomerReturnFamily } from './family.js';
import { returnOverview } from './overview.js';
import { warrantyCaseBody, warrantyCasePath } from './pushResource.js';
import { RETURN_TIMELINE } from './timeline.js';

export const customerReturn: FamilyModule = {
  name: 'customerReturn',
  label: 'customer_return',
  logKey: 'customerReturn',
  spanKey: 'sap.customer_return',
  owns: isCustomerReturnType,
  keyOf(type, data) {
    const named = customerReturnEvent(type, data);
    return named.ok ? { ok: true, key: named.customerReturn } : named;
  },
  create: (deps, config) =>
    createCustomerReturnFamily({
      ...deps,
      maxDeliveries: config.maxDeliveries,
      warrantyReturnReasons: config.customerReturn.warrantyReturnReasons,
    }),
  mail: () => ({ render: (mail, settings) => renderCaseEmail(caseMailOf(mail), settings) }),
  push: { request: (push) => ({ path: warrantyCasePath(push.key), body: warrantyCaseBody(push) }) },
  admin: {
    lookup: '/api/returns',
    pushes: '/api/portal-pushes/warranty-cases',
    param: 'customerReturn',
    what: 'customer return',
    // The same rule the event parser applies to data.CustomerReturn before its leading zeros go.
    keyPattern: CUSTOMER_RETURN_KEY,
    // `0060000000` is return 60000000.
    normalise: (raw) => customerReturnKey(raw) ?? raw,
    overview: returnOverview,
    timeline: RETURN_TIMELINE,
    console: {
      page: 'returns',
      label: 'Customer return',
      example: '60000000',
      typePrefix: CUSTOMER_RETURN_TYPE_PREFIX,
      state: [['caseStatus', 'case status']],
    },
  },
  // Tombstones of cases never opened, kept as long as the events that could still name them.
  expiries: [{ target: 'caseTombstones', cutoff: 'event', sql: EXPIRED_TOMBSTONES }],
  reconcile: {
    collection: (config) =>
      customerReturnCollection(config.s4.version, config.customerReturn.warrantyReturnReasons),
    openKeys: openCaseKeys,
  },
};
