// Services a test started and has not stopped. One left running keeps consuming from its queue, holds database
// connections and runs its timers into the next test, which then passes or fails for reasons of its own: the
// setup file (test/support/setup.running.ts) fails the test that left it, and stops it.
import { expect } from 'vitest';
import type { Service } from '../../src/service/buildService.js';

const running = new Map<Service, { startedIn: string | undefined }>();

/** The service, its stop() also telling the register that it is stopped. */
export function tracked(service: Service): Service {
  const view: Service = {
    ...service,
    stop: () => service.stop().finally(() => running.delete(view)),
  };
  // Started in a test or its beforeEach: that test owns it. Started in beforeAll: the file does.
  running.set(view, { startedIn: expect.getState().currentTestName });
  return view;
}

/** Stops the services still running that `test` (a vitest currentTestName) started, or any without it; says how many. */
export async function stopLeftRunning(test?: string): Promise<number> {
  const left = [...running].filter(([, { startedIn }]) => test === undefined || startedIn === test);
  await Promise.all(left.map(([service]) => service.stop()));
  return left.length;
}
