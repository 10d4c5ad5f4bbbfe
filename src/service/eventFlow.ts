// The per-message path as the composition root wires it: S/4HANA reads (batched and paused per destination,
// observed by the metrics), the one transaction with its mail and portal outbox rows (one for the events a read
// answered together), and the senders woken after a commit that queued for them.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/loadConfig.js';
import { applyEffect } from '../events/applyEffect.js';
import { groupEffects } from '../events/effectGroups.js';
import { createEventHandler, type HandleEvent } from '../events/handleEvent.js';
import type { RetryPolicy } from '../retry.js';
import { batchReads } from '../s4/batchedReads.js';
import { createSalesOrderApi } from '../s4/salesOrderApi.js';
import type { Metrics } from '../telemetry/metrics.js';
import { traceparentOf } from '../telemetry/tracing.js';
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
  const readOrder = batchReads(createSalesOrderApi(config.s4), {
    maxConcurrent: config.s4.maxConcurrentReads,
    batchSize: config.s4.readBatch,
    // An event waits out a pause as long as its own retries of a slow S/4HANA could have held it.
    maxWaitMs: retryPolicy.attempts * (config.s4.timeoutMs + retryPolicy.maxDelayMs),
    logger: logger.child({ component: 's4' }),
    observe: metrics.observeS4,
    onPause: metrics.s4Paused,
  });
  const effectMail = {
    to: config.mail.to,
    locale: config.mail.locale,
    messageIdDomain: config.mail.messageIdDomain,
  };
  const pushToPortal = portalSender !== undefined;
  return createEventHandler({
    pool,
    readOrder,
    writeEffect: groupEffects(async (events, order, trace) => {
      const effect = await applyEffect(pool, events, order, effectMail, pushToPortal, traceparentOf(trace));
      if (effect.pushQueued) portalSender?.wake();
      return effect;
    }),
    retryPolicy,
    maxDeliveries: config.maxDeliveries,
    maxMessageBytes: config.maxMessageBytes,
    onMailQueued: () => mailSender.wake(),
    observe: metrics.observeEvent,
    logger,
  });
}
