import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Once, before the forked workers start (they inherit the environment these set):
    // - the real PostgreSQL and RabbitMQ answer, and a migrated template database exists;
    // - a localhost TLS certificate the workers trust via NODE_EXTRA_CA_CERTS (XSUAA key endpoint).
    // Keep the default `forks` pool: NODE_EXTRA_CA_CERTS is read only when a process starts.
    globalSetup: ['test/support/globalSetup.services.ts', 'test/support/globalSetup.tls.ts'],
    // Each file: fail a test (or the file) that leaves a service running.
    setupFiles: ['test/support/setup.running.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
