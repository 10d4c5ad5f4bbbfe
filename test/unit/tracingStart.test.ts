// startTracing as the service calls it, for what it registers globally beside the provider.
import { propagation } from '@opentelemetry/api';
import { expect, it } from 'vitest';
import { startTracing } from '../../src/telemetry/tracing.js';

it('registers the W3C trace-context propagator alone, as no event carries baggage, and removes it on shutdown', async () => {
  const tracing = await startTracing({
    // Nothing is exported: no span is started.
    tracesUrl: 'http://127.0.0.1:9/v1/traces',
    headers: {},
    serviceName: 'fleet-order-notifier-test',
    sampler: { name: 'parentbased_always_on', ratio: 1 },
  });
  try {
    expect(propagation.fields()).toEqual(['traceparent', 'tracestate']);
  } finally {
    await tracing.shutdown();
  }
  expect(propagation.fields()).toEqual([]);
});
