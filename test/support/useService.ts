import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Service } from '../../src/service/buildService.js';
import { createTestQueue, type TestQueue } from './broker.js';
import { startTestService, type TestServiceOptions } from './harness.js';
import type { LocalEndpoints } from './serviceEnv.js';
import type { World } from './world.js';

export interface UseServiceOptions extends Omit<TestServiceOptions, keyof LocalEndpoints> {
  /** Consume from a new queue named after this prefix; without it the service takes events by webhook only. */
  queue?: string;
  /** A new queue and service for each test, so that no test sees another's deliveries; else one for the file. */
  perTest?: boolean;
}

export interface Running {
  readonly service: Service;
  readonly queue: TestQueue;
}

/**
 * The service on this world, started in the hooks where it is called and stopped (its queue deleted) before the
 * world is. Call it after useWorld. Like the world's parts, service and queue exist once the start hook ran.
 */
export function useService(world: World, options: UseServiceOptions = {}): Running {
  const { queue: prefix, perTest = false, ...serviceOptions } = options;
  let queue: TestQueue | undefined;
  let service: Service | undefined;
  (perTest ? beforeEach : beforeAll)(async () => {
    queue = prefix === undefined ? undefined : await createTestQueue(prefix);
    service = await startTestService({
      ...world.endpoints(),
      ...serviceOptions,
      ...(queue && { queueAddress: queue.address }),
    });
  });
  (perTest ? afterEach : afterAll)(async () => {
    await service?.stop();
    await queue?.delete();
    service = undefined;
    queue = undefined;
  });
  return {
    get service() {
      if (service === undefined) throw new Error('the service starts in a hook: use it in a test');
      return service;
    },
    get queue() {
      if (queue === undefined)
        throw new Error(prefix === undefined ? 'this service takes no queue' : 'the queue is made in a hook');
      return queue;
    },
  };
}
