// The per-message path as the composition root configures it: the sales-order family (its S/4HANA reads and its
// effect, salesOrderFamily.ts) chosen for events that name a sales order, and the outbox senders woken after a
// commit that queued for them. The path itself is src/events/handleEvent.ts.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/loadConfig.js';
import { createEventHandler, type HandleEvent } from '../events/handleEvent.js';
import { createSalesOrderFamily } from '../events/salesOrderFamily.js';
import type { RetryPolicy } from '../retry.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { OutboxSenders } from './outboxSenders.js';

export interface EventFlowDeps {
  pool: Pool;
  metrics: Metrics;
  senders: OutboxSenders;
  retryPolicy: RetryPolicy;
  logger: Logger;
}

export function createEventFlow(config: Readonly<Config>, deps: EventFlowDeps): HandleEvent {
  const { pool, metrics, retryPolicy, logger } = deps;
  const { mailSender, portalSender } = deps.senders;
  const salesOrders = createSalesOrderFamily({
    pool,
    s4: config.s4,
    mail: { to: config.mail.to, locale: config.mail.locale, messageIdDomain: config.mail.messageIdDomain },
    pushToPortal: portalSender !== undefined,
    retryPolicy,
    logger,
    observe: { observe: metrics.observeS4, onPause: metrics.s4Paused },
  });
  return createEventHandler({
    pool,
    familyOf: (event) => (event.salesOrder === undefined ? undefined : salesOrders),
    onQueued: ({ mailQueued, pushQueued }) => {
      if (mailQueued) mailSender.wake();
      if (pushQueued) portalSender?.wake();
    },
    retryPolicy,
    maxDeliveries: config.maxDeliveries,
    maxMessageBytes: config.maxMessageBytes,
    observe: metrics.observeEvent,
    logger,
  });
}
