// The sales-order family as the shared path asks it (../familyModule.ts).
import type { FamilyModule } from '../familyModule.js';
import { openOrderKeys, salesOrderCollection } from './collection.js';
import { orderMailOf, renderEmail } from './email.js';
import { isSalesOrderType, SALES_ORDER_KEY, SALES_ORDER_TYPE_PREFIX, salesOrderKey } from './events.js';
import { createSalesOrderFamily } from './family.js';
import { openOrderGauges, orderCounts } from './openOrders.js';
import { orderOverview } from './overview.js';
import { orderPath, portalBody } from './pushResource.js';
import { ORDER_TIMELINE } from './timeline.js';

export const salesOrder: FamilyModule = {
  name: 'salesOrder',
  label: 'sales_order',
  logKey: 'salesOrder',
  spanKey: 'sap.sales_order',
  owns: isSalesOrderType,
  keyOf: salesOrderKey,
  create: (deps) => createSalesOrderFamily(deps),
  mail: ({ salesOrder: { portalOrderUrl } }) => ({
    render: (mail, settings) => renderEmail(orderMailOf(mail), { ...settings, portalOrderUrl }),
  }),
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
    summary: orderCounts,
    console: {
      page: 'orders',
      label: 'Sales order',
      example: '1000473',
      typePrefix: SALES_ORDER_TYPE_PREFIX,
      state: [
        ['portalStatus', ''],
        ['requestedDeliveryDate', 'requested delivery'],
      ],
    },
  },
  expiries: [],
  gauges: openOrderGauges,
  reconcile: {
    collection: (config) => salesOrderCollection(config.s4.version),
    openKeys: openOrderKeys,
  },
};
