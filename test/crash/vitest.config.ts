// The crash suite on its own: one long test that starts OS processes, its own PostgreSQL server and its own
// queue. It needs none of the main suite's global setups, and its files end in .crash.ts so that the main
// configuration (test/**/*.test.ts) never picks them up.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/crash/**/*.crash.ts'],
    pool: 'forks',
    fileParallelism: false,
    // About 1.5 minutes when all is well; a phase that cannot settle waits up to CRASH_SETTLE_MS (150 s) each.
    testTimeout: 20 * 60_000,
  },
});
