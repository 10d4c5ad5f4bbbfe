// Fails a test that leaves a service it started running, and a file that leaves one started in beforeAll; fails
// a test (or the file, for its hooks) whose service logged an address or a credential (logGuard.ts).
// Registered before each file's own hooks, so it runs after them: a file's afterEach/afterAll may stop its
// services first.
import { afterAll, afterEach, expect } from 'vitest';
import { assertNoLeaks } from './logGuard.js';
import { stopLeftRunning } from './running.js';

afterEach(async () => {
  const left = await stopLeftRunning(expect.getState().currentTestName ?? '');
  if (left > 0) throw new Error(`the test left ${left} service(s) running; they are stopped now`);
  assertNoLeaks();
});

afterAll(async () => {
  const left = await stopLeftRunning();
  if (left > 0)
    throw new Error(`the file left ${left} service(s) running after its last test; they are stopped now`);
  assertNoLeaks();
});
