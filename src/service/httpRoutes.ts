// What the HTTP app serves besides /health and /metrics: the auth decorator, the push endpoints INGEST asks for
// (Event Mesh's webhook, Event Hub), and the admin API.
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/loadConfig.js';
import type { HandleEvent } from '../events/outcome.js';
import { FAMILY_ADMINS } from '../families/index.js';
import { adminRoutes } from '../http/adminRoutes.js';
import type { Auth } from '../http/auth.js';
import { consoleRoutes } from '../http/consoleRoutes.js';
import { requireEventHubToken } from '../http/eventHubAuth.js';
import { eventHubRoutes } from '../http/eventHubRoutes.js';
import { webhookRoutes } from '../http/webhookRoutes.js';

export interface RouteDeps {
  pool: Pool;
  auth: Auth;
  handle: HandleEvent;
  wakeMailSender: () => void;
  wakePortalSender: () => void;
  logger: Logger;
}

export function httpRoutes(
  config: Readonly<Config>,
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
      families: FAMILY_ADMINS,
    }),
    consoleRoutes,
  );
  return plugins;
}
