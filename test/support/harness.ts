// Starts the real service in this process against the real PostgreSQL and RabbitMQ, a local S/4HANA
// stand-in and a real SMTP receiver, configured through the same loadConfig as production.
import type { Logger } from 'pino';
import { type Config, loadConfig } from '../../src/config/loadConfig.js';
import type { RetryPolicy } from '../../src/retry.js';
import {
  type BuildOptions,
  buildService,
  type Service,
  type ServiceParts,
  startService,
} from '../../src/service/buildService.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { registerDestination } from './destination.js';
import { guardedDestination, guardedLevel, watchServiceEnv } from './logGuard.js';
import { tracked } from './running.js';
import { type LocalEndpoints, serviceEnv } from './serviceEnv.js';
import { eventually } from './waits.js';

export interface TestServiceOptions extends LocalEndpoints {
  env?: Record<string, string>;
  /** The event families; the service's own unless given. */
  families?: BuildOptions['families'];
  retryPolicy?: RetryPolicy;
  /** How often the mail sender looks for due mail when nobody wakes it (default 200 ms). */
  mailPollMs?: number;
  /** Receives the service's JSON log lines (at LOG_LEVEL) instead of stdout; the log guard reads them all. */
  logLines?: string[];
  /** With a queue: return once the receiver is attached (default), or at once. */
  waitForAttach?: boolean;
}

/** The service's configuration and logger for these stand-ins, through the same loadConfig as production. */
function testSetup(options: TestServiceOptions): { config: Config; logger: Logger; build: BuildOptions } {
  const env = {
    // The SDK reads destinations from this process's environment: register a name of its own there.
    ...serviceEnv({ ...options, destination: registerDestination(options.s4Url) }),
    DATABASE_POOL_SIZE: '8',
    S4_TIMEOUT_MS: '1000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...options.env,
  };
  const config = loadConfig(env);
  watchServiceEnv(env);
  // The guard reads every line at debug level, whatever LOG_LEVEL lets through to the test.
  const destination = guardedDestination(config.logLevel, options.logLines);
  return {
    config,
    logger: createLogger(guardedLevel(config.logLevel), destination),
    build: {
      ...(options.families && { families: options.families }),
      retryPolicy: options.retryPolicy ?? { attempts: 3, baseDelayMs: 20, maxDelayMs: 100 },
      mailPollMs: options.mailPollMs ?? 200,
    },
  };
}

/** The service's parts, built as in production but not started: drive them with `app.inject` and `handle`. */
export async function buildTestService(options: TestServiceOptions): Promise<ServiceParts> {
  const { config, logger, build } = testSetup(options);
  return buildService(config, logger, build);
}

export async function startTestService(options: TestServiceOptions): Promise<Service> {
  const { config, logger, build } = testSetup(options);
  const service = tracked(await startService(config, logger, { ...build, host: '127.0.0.1' }));
  if (options.queueAddress !== undefined && options.waitForAttach !== false) {
    await eventually('the receiver to attach', async () => service.amqp?.isAttached());
  }
  return service;
}
