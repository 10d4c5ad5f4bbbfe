// What every event family is built from by the composition root: the pool, S/4HANA's settings and its one
// destination limit, the mail defaults, the retry policy and the logger.
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { S4Settings } from '../config/s4Config.js';
import type { EffectMail } from '../events/effect.js';
import type { RetryPolicy } from '../retry.js';
import type { BatchedReadOptions } from '../s4/batchedReads.js';
import type { DestinationLimit } from '../s4/destinationLimit.js';

/** What every family is built from by the composition root. */
export interface FamilyDeps {
  pool: Pool;
  s4: S4Settings;
  mail: EffectMail;
  /** Whether a portal is configured: then the effect queues a push of the state. */
  pushToPortal: boolean;
  retryPolicy: RetryPolicy;
  logger: Logger;
  /** The S/4HANA destination's limit of requests in flight and its pause: one for every family. */
  s4Limit: DestinationLimit;
  observe: Pick<BatchedReadOptions, 'observe'>;
}

/** The batched reads' options of a family, the same for every family of a destination, its limit shared. */
export function familyReadOptions(deps: FamilyDeps): BatchedReadOptions {
  const { s4, retryPolicy } = deps;
  return {
    destination: deps.s4Limit,
    batchSize: s4.readBatch,
    // An event waits out a pause as long as its own retries of a slow S/4HANA could have held it.
    maxWaitMs: retryPolicy.attempts * (s4.timeoutMs + retryPolicy.maxDelayMs),
    logger: deps.logger.child({ component: 's4' }),
    ...deps.observe,
  };
}
