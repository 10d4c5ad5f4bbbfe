// The sales-order family: its state is the order as S/4HANA has it now, read in batches (batchedReads.ts) and
// paused per destination; its effect is one statement for the events one read answered (effectGroups.ts).
import { PermanentError } from '../../errors.js';
import { groupEffects, type WriteGroup } from '../../events/effectGroups.js';
import type { Family } from '../../events/family.js';
import { batchReads, type ReadDocument } from '../../s4/batchedReads.js';
import { inSpan, SpanKind, traceparentOf } from '../../telemetry/tracing.js';
import { type FamilyDeps, familyReadOptions } from '../familyDeps.js';
import { createSalesOrderApi } from './api.js';
import { applyEffect } from './effect.js';
import type { SalesOrder } from './entity.js';
import { type PortalOrder, toPortalOrder } from './state.js';

export function createSalesOrderFamily(deps: FamilyDeps): Family<PortalOrder> {
  const { pool, s4, mail, pushToPortal } = deps;
  const batchedRead = batchReads(createSalesOrderApi(s4), familyReadOptions(deps));
  return salesOrderFamily(batchedRead, (events, order, trace) =>
    applyEffect(pool, events, order, mail, pushToPortal, traceparentOf(trace)),
  );
}

/** The family from its reader and its grouped statement; events that one read answered share one statement. */
export function salesOrderFamily(
  batchedRead: ReadDocument<SalesOrder>,
  writeGroup: WriteGroup<PortalOrder>,
): Family<PortalOrder> {
  return {
    async read(event, signal, trace) {
      const salesOrder = event.family === 'salesOrder' ? event.key : undefined;
      if (salesOrder === undefined) throw new PermanentError('not a sales-order event');
      const { document: order, readAt } = await inSpan(
        'S/4HANA read',
        { kind: SpanKind.CLIENT, attributes: { 'sap.sales_order': salesOrder } },
        trace,
        (_span, read) => batchedRead(salesOrder, signal, read),
      );
      return order === null ? null : toPortalOrder(order, readAt);
    },
    writeEffect: groupEffects(writeGroup),
  };
}
