// The process: read the configuration, start the service, stop it on SIGTERM (Cloud Foundry) or SIGINT.
import { ConfigError, loadConfig } from './config/loadConfig.js';
import { startService } from './service/buildService.js';
import { createLogger } from './telemetry/logger.js';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  createLogger('error').fatal({ problems: err.problems }, err.message);
  process.exit(1);
}
const logger = createLogger(config.logLevel);

try {
  const service = await startService(config, logger);
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'signal received');
    void service.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
} catch (err) {
  logger.fatal({ err }, 'start failed');
  process.exit(1);
}

// A bug that escapes every handler: exit and let the platform restart the process. Unsettled messages return
// to the queue with the connection, so nothing is lost; the delivery count stops a message that causes it.
process.on('uncaughtException', (err) => {
  logger.fatal({ err }, 'uncaught exception');
  process.exit(1);
});
process.on('unhandledRejection', (err) => {
  logger.fatal({ err }, 'unhandled rejection');
  process.exit(1);
});
