// The sales-order family: its state is the order as S/4HANA has it now, read in batches (batchedReads.ts) and
// paused per destination; its effect is one statement for the events one read answered (effectGroups.ts).
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { S4Settings } from '../config/s4Config.js';
import { PermanentError } from '../errors.js';
import { type PortalOrder, toPortalOrder } from '../portal/portalStatus.js';
import type { RetryPolicy } from '../retry.js';
import { type BatchedReadOptions, batchReads, type ReadOrder } from '../s4/batchedReads.js';
import { createSalesOrderApi } from '../s4/salesOrderApi.js';
import { inSpan, SpanKind, traceparentOf } from '../telemetry/tracing.js';
import { applyEffect, type EffectMail } from './applyEffect.js';
import { groupEffects, type WriteGroup } from './effectGroups.js';
import type { Family } from './family.js';

export interface SalesOrderFamilyDeps {
  pool: Pool;
  s4: S4Settings;
  mail: EffectMail;
  /** Whether a portal is configured: then the effect queues a push of the order's state. */
  pushToPortal: boolean;
  retryPolicy: RetryPolicy;
  logger: Logger;
  observe: Pick<BatchedReadOptions, 'observe' | 'onPause'>;
}

export function createSalesOrderFamily(deps: SalesOrderFamilyDeps): Family<PortalOrder> {
  const { pool, s4, mail, pushToPortal, retryPolicy } = deps;
  const batchedRead = batchReads(createSalesOrderApi(s4), {
    maxConcurrent: s4.maxConcurrentReads,
    batchSize: s4.readBatch,
    // An event waits out a pause as long as its own retries of a slow S/4HANA could have held it.
    maxWaitMs: retryPolicy.attempts * (s4.timeoutMs + retryPolicy.maxDelayMs),
    logger: deps.logger.child({ component: 's4' }),
    ...deps.observe,
  });
  return salesOrderFamily(batchedRead, (events, order, trace) =>
    applyEffect(pool, events, order, mail, pushToPortal, traceparentOf(trace)),
  );
}

/** The family from its reader and its grouped statement; events that one read answered share one statement. */
export function salesOrderFamily(batchedRead: ReadOrder, writeGroup: WriteGroup): Family<PortalOrder> {
  return {
    async read(event, signal, trace) {
      const { salesOrder } = event;
      if (salesOrder === undefined) throw new PermanentError('not a sales-order event');
      const { order, readAt } = await inSpan(
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
