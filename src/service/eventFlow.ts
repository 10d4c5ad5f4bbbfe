// The per-message path as the composition root configures it: each event family it is given built
// (its S/4HANA reads and its effect) and chosen by the family the parser named, and the outbox senders woken
// after a commit that queued for them. The path itself is src/events/handleEvent.ts.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/loadConfig.js';
import { createEventHandler, type HandleEvent } from '../events/handleEvent.js';
import type { FamilyDeps } from '../families/familyDeps.js';
import type { FamilyModule } from '../families/index.js';
import type { RetryPolicy } from '../retry.js';
import { createDestinationLimit } from '../s4/destinationLimit.js';
import type { Metrics } from './metrics.js';
import type { OutboxSenders } from './outboxSenders.js';

export interface EventFlowDeps {
  families: readonly FamilyModule[];
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
    // Built once: every family's reads count against one limit and wait out one pause of the destination.
    s4Limit: createDestinationLimit({
      maxConcurrent: config.s4.maxConcurrentReads,
      onPause: metrics.s4Paused,
    }),
    observe: { observe: metrics.observeS4 },
  };
  const families = new Map(deps.families.map((family) => [family.name, family.create(familyDeps, config)]));
  return createEventHandler({
    pool,
    families: deps.families,
    familyOf: (event) => (event.family === undefined ? undefined : families.get(event.family)),
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
