import { defineConfig } from 'vitest/config';
import { RealSamplesReporter } from './test/support/realSamplesReporter.js';

// test/tooling/ guards the harness, not the product: the bench report, its relay and the crash suite's judges need
// no service and run with the unit tests; the sandbox, demo, local-mode and plain-consumer tests start servers and
// processes of their own.
const TOOLING_WITHOUT_SERVICES = [
  'test/tooling/benchReport.test.ts',
  'test/tooling/crashChecks.test.ts',
  'test/tooling/crashChecksReturns.test.ts',
  'test/tooling/crashChecksReconcile.test.ts',
  'test/tooling/pgRelay.test.ts',
];

// Three projects: `unit` needs no service, `integration` runs against the real PostgreSQL, RabbitMQ and SMTP, and
// `crash` runs alone after both, because it kills processes and restarts a PostgreSQL server of its own.
export default defineConfig({
  test: {
    reporters: ['default', new RealSamplesReporter()],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', ...TOOLING_WITHOUT_SERVICES],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          // The console's browser test needs the same services, and Chromium (scripts/ensure-services.sh).
          include: [
            'test/integration/**/*.test.ts',
            'test/browser/**/*.test.ts',
            'test/tooling/**/*.test.ts',
          ],
          exclude: TOOLING_WITHOUT_SERVICES,
          // Once, before the forked workers start (they inherit the environment these set):
          // - the real PostgreSQL and RabbitMQ answer, and a migrated template database exists;
          // - a localhost TLS certificate the workers trust via NODE_EXTRA_CA_CERTS (XSUAA key endpoint).
          // Keep the default `forks` pool: NODE_EXTRA_CA_CERTS is read only when a process starts.
          globalSetup: ['test/support/globalSetup.services.ts', 'test/support/globalSetup.tls.ts'],
          // Each file: fail a test (or the file) that leaves a service running.
          setupFiles: ['test/support/setup.running.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'crash',
          // One long test that starts OS processes, its own PostgreSQL server and its own queue.
          include: ['test/crash/**/*.crash.ts'],
          pool: 'forks',
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          // A phase that cannot settle waits up to CRASH_SETTLE_MS each.
          testTimeout: 20 * 60_000,
        },
      },
    ],
  },
});
