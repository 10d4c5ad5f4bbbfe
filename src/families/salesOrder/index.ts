// The sales-order family as the shared path asks it (src/events/familyModule.ts).
import type { FamilyModule } from '../../events/familyModule.js';
import { orderMailOf, renderEmail } from './email.js';
import { isSalesOrderType, SALES_ORDER_KEY, salesOrderKey } from './events.js';
import { orderOverview } from './orderOverview.js';
import { ORDER_TIMELINE } from './orderTimeline.js';
import { orderPath, portalBody } from './pushResource.js';
import { createSalesOrderFamily } from './salesOrderFamily.js';

export const salesOrder: FamilyModule = {
  name: 'salesOrder',
  label: 'sales_order',
  logKey: 'salesOrder',
  spanKey: 'sap.sales_order',
  owns: isSalesOrderType,
  keyOf: salesOrderKey,
  create: (deps) => createSalesOrderFamily(deps),
  mail: { render: (mail, settings) => renderEmail(orderMailOf(mail), settings) },
  push: { request: (push) => ({ path: orderPath(push.key), body: portalBody(push) }) },
  admin: {
    lookup: '/api/orders',
    pushes: '/api/portal-pushes',
    param: 'salesOrder',
    what: 'sales order',
    keyPattern: SALES_ORDER_KEY,
    normalise: (raw) => raw,
    overview: orderOverview,
    timeline: ORDER_TIMELINE,
  },
};
