// What the HTTP app serves besides /health and /metrics: the auth decorator, the push endpoints INGEST asks for
// (Event Mesh's webhook, Event Hub), and the admin API.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/loadConfig.js';
import { type FamilyModule, familyAdmins } from '../families/index.js';
import { type AdminDeps, adminRoutes } from '../http/adminRoutes.js';
import { consoleRoutes } from '../http/consoleRoutes.js';
import { requireEventHubToken } from '../http/eventHubAuth.js';
import { eventHubRoutes } from '../http/eventHubRoutes.js';
import { reconcileRoutes } from '../http/reconcileRoutes.js';
import { webhookRoutes } from '../http/webhookRoutes.js';
import type { Reconciliation } from './reconciliation.js';

export interface RouteDeps extends Omit<AdminDeps, 'families'> {
  /** Undefined without S4_SOURCE: the list is empty and a start is refused. */
  reconciliation: Reconciliation | undefined;
  logger: Logger;
}

export function httpRoutes(
  config: Readonly<Config>,
  families: readonly FamilyModule[],
  deps: RouteDeps,
): Array<(app: FastifyInstance) => Promise<void> | void> {
  const { pool, auth, handle, logger } = deps;
  const plugins: Array<(app: FastifyInstance) => Promise<void> | void> = [(app) => auth.decorate(app)];
  if (config.ingest.includes('webhook')) {
    plugins.push(
      webhookRoutes({
        handle,
        auth,
        maxMessageBytes: config.maxMessageBytes,
        logger: logger.child({ component: 'webhook' }),
      }),
    );
  }
  if (config.eventHub !== undefined) {
    plugins.push(
      eventHubRoutes({
        handle,
        requireEventHub: requireEventHubToken(config.eventHub),
        maxMessageBytes: config.maxMessageBytes,
        logger: logger.child({ component: 'event-hub' }),
      }),
    );
  }
  // Replays take the same path as live messages.
  plugins.push(
    adminRoutes({
      pool,
      auth,
      handle,
      wakeMailSender: deps.wakeMailSender,
      wakePortalSender: deps.wakePortalSender,
      families: familyAdmins(families),
    }),
    reconcileRoutes({ auth, control: deps.reconciliation?.control }),
    consoleRoutes,
  );
  return plugins;
}
