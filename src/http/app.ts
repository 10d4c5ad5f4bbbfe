import fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { HealthReport } from './health.js';

export interface AppDeps {
  logger: Logger;
  health: () => Promise<HealthReport>;
  metrics: Registry;
  /** Further routes (admin API, webhook), registered by the composition root. */
  plugins?: Array<(app: FastifyInstance) => Promise<void> | void>;
  bodyLimit?: number;
}

const PROBES = new Set(['/health', '/metrics']);

/** Builds the HTTP app without listening, so tests drive it with inject(). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Probes every few seconds would drown the log; admin and webhook requests stay logged.
    logController: new LogController({ disableRequestLogging: (request) => PROBES.has(request.url) }),
    bodyLimit: deps.bodyLimit,
  });

  // Unauthenticated on purpose: Cloud Foundry's health check calls it. It carries no secrets.
  app.get('/health', async (_request, reply) => {
    const report = await deps.health();
    return reply.code(report.status === 'UP' ? 200 : 503).send(report);
  });

  app.get('/metrics', async (_request, reply) => {
    return reply.type(deps.metrics.contentType).send(await deps.metrics.metrics());
  });

  for (const plugin of deps.plugins ?? []) await plugin(app);
  return app;
}
