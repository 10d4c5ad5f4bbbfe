// The per-message path as the composition root configures it: each event family it is given built
// (its S/4HANA reads and its effect) and chosen by the family the parser named, and the outbox senders woken
// after a commit that queued for them. The path itself is src/events/handleEvent.ts. With S4_SOURCE set, the
// same path takes reconciliation's reads (src/events/reconcileRead.ts).
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/loadConfig.js';
import { createEventHandler, type EventHandlerDeps, type HandleEvent } from '../events/handleEvent.js';
import { type ApplyRead, createReconcileRead, type ReconcileWriter } from '../events/reconcileRead.js';
import type { FamilyDeps } from '../families/familyDeps.js';
import type { FamilyModule } from '../families/index.js';
import type { RetryPolicy } from '../retry.js';
import type { DestinationLimit } from '../s4/destinationLimit.js';
import type { Metrics } from './metrics.js';
import type { OutboxSenders } from './outboxSenders.js';

export interface EventFlowDeps {
  families: readonly FamilyModule[];
  pool: Pool;
  metrics: Metrics;
  senders: OutboxSenders;
  retryPolicy: RetryPolicy;
  logger: Logger;
  /** The S/4HANA destination's one limit: every family's reads, and reconciliation's below them. */
  s4Limit: DestinationLimit;
}

export interface EventFlow {
  handle: HandleEvent;
  /** Reconciliation's reads through the same path; undefined without S4_SOURCE. */
  applyRead: ApplyRead | undefined;
}

export function createEventFlow(config: Readonly<Config>, deps: EventFlowDeps): EventFlow {
  const { pool, metrics, retryPolicy, logger } = deps;
  const { mailSender, portalSender } = deps.senders;
  const familyDeps: FamilyDeps = {
    pool,
    s4: config.s4,
    mail: { to: config.mail.to, locale: config.mail.locale, messageIdDomain: config.mail.messageIdDomain },
    pushToPortal: portalSender !== undefined,
    retryPolicy,
    logger,
    s4Limit: deps.s4Limit,
    observe: { observe: metrics.observeS4 },
  };
  const families = new Map(deps.families.map((family) => [family.name, family.create(familyDeps, config)]));
  const handlerDeps: EventHandlerDeps = {
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
  };
  const handle = createEventHandler(handlerDeps);
  if (config.reconcile === undefined) return { handle, applyRead: undefined };

  const writers = new Map<string, ReconcileWriter>();
  for (const module of deps.families) {
    const family = families.get(module.name);
    const collection = module.reconcile?.collection(config);
    if (family === undefined || collection === undefined) continue;
    writers.set(module.name, { family, deleted: (key, readAt) => collection.deleted?.(key, readAt) ?? null });
  }
  const applyRead = createReconcileRead({
    ...handlerDeps,
    source: config.reconcile.source,
    writerOf: (name) => writers.get(name),
  });
  return { handle, applyRead };
}
