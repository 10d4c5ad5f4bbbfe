// The per-message path as the composition root configures it: each event family (its S/4HANA reads and its
// effect: salesOrderFamily.ts, src/families/customerReturn/) chosen by the family the parser named, and the outbox
// senders woken after a commit that queued for them. The path itself is src/events/handleEvent.ts.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/loadConfig.js';
import type { EventFamily } from '../events/cloudEvent.js';
import type { Family, FamilyDeps } from '../events/family.js';
import { createEventHandler, type HandleEvent } from '../events/handleEvent.js';
import { createCustomerReturnFamily } from '../families/customerReturn/customerReturnFamily.js';
import { createSalesOrderFamily } from '../families/salesOrder/salesOrderFamily.js';
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
  const familyDeps: FamilyDeps = {
    pool,
    s4: config.s4,
    mail: { to: config.mail.to, locale: config.mail.locale, messageIdDomain: config.mail.messageIdDomain },
    pushToPortal: portalSender !== undefined,
    retryPolicy,
    logger,
    observe: { observe: metrics.observeS4, onPause: metrics.s4Paused },
  };
  const families: Record<EventFamily, Family> = {
    salesOrder: createSalesOrderFamily(familyDeps),
    customerReturn: createCustomerReturnFamily({ ...familyDeps, maxDeliveries: config.maxDeliveries }),
  };
  return createEventHandler({
    pool,
    familyOf: (event) => (event.family === undefined ? undefined : families[event.family]),
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
