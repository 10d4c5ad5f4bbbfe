// The customer-return family as the shared path asks it (src/events/familyModule.ts).
import type { FamilyModule } from '../../events/familyModule.js';
import { caseMailOf, renderCaseEmail } from './caseEmail.js';
import { createCustomerReturnFamily } from './customerReturnFamily.js';
import {
  CUSTOMER_RETURN_KEY,
  customerReturnEvent,
  customerReturnKey,
  isCustomerReturnType,
} from './events.js';
import { warrantyCaseBody, warrantyCasePath } from './pushResource.js';
import { returnOverview } from './returnOverview.js';
import { RETURN_TIMELINE } from './returnTimeline.js';

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
  create: (deps, config) => createCustomerReturnFamily({ ...deps, maxDeliveries: config.maxDeliveries }),
  mail: { render: (mail, settings) => renderCaseEmail(caseMailOf(mail), settings) },
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
  },
};
