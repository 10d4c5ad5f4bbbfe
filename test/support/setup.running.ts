// Fails a test that leaves a service it started running, and a file that leaves one started in beforeAll.
// Registered before each file's own hooks, so it runs after them: a file's afterEach/afterAll may stop its
// services first.
import { afterAll, afterEach, expect } from 'vitest';
import { stopLeftRunning } from './running.js';

afterEach(async () => {
  const left = await stopLeftRunning(expect.getState().currentTestName ?? '');
  if (left > 0) throw new Error(`the test left ${left} service(s) running; they are stopped now`);
});

afterAll(async () => {
  const left = await stopLeftRunning();
  if (left > 0)
    throw new Error(`the file left ${left} service(s) running after its last test; they are stopped now`);
});
