// OTEL_TRACES_SAMPLER as the service builds it (samplerOf), with the real SDK registered as startTracing
// registers it and an in-memory exporter: the spans below a delivery follow its decision, the parent-based
// samplers keep a producer's decision, and the mail send, linked and without a parent, follows the event that
// queued it.
import { propagation, trace } from '@opentelemetry/api';
import * as sdk from '@opentelemetry/sdk-trace-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SAMPLER } from '../../src/config/tracingConfig.js';
import type { TracingConfig } from '../../src/telemetry/tracing.js';

// A provider's shutdown stops its exporter for good: each registration has its own.
let exporter = new sdk.InMemorySpanExporter();
let provider: sdk.NodeTracerProvider | undefined;

/**
 * Registers a provider with `sampler` and loads src/telemetry/tracing.ts anew: its tracer is bound, once, to the provider
 * registered when the module loads, as in a service, which registers one provider for its life.
 */
async function register(sampler: TracingConfig['sampler'], asked: string[] = []) {
  vi.resetModules();
  const tracing = await import('../../src/telemetry/tracing.js');
  exporter = new sdk.InMemorySpanExporter();
  const built = tracing.samplerOf(sdk, sampler);
  provider = new sdk.NodeTracerProvider({
    // Records the name of every span the SDK is asked to start.
    sampler: {
      shouldSample(...args: Parameters<sdk.Sampler['shouldSample']>) {
        asked.push(args[2]);
        return built.shouldSample(...args);
      },
      toString: () => built.toString(),
    },
    spanProcessors: [new sdk.SimpleSpanProcessor(exporter)],
  });
  provider.register({ contextManager: null });
  return tracing;
}

afterEach(async () => {
  await provider?.shutdown();
  trace.disable();
  propagation.disable();
});

const tick = () => new Promise((resolve) => setImmediate(resolve));
const exported = () => exporter.getFinishedSpans().map((span) => span.name);

type Tracing = Awaited<ReturnType<typeof register>>;

/** A delivery as the handler traces it, then the mail send linked to its transaction; the stored traceparent. */
async function deliverAndSend(
  { inSpan, linkTo, traceparentOf, ROOT_CONTEXT }: Tracing,
  parent = ROOT_CONTEXT,
): Promise<string | null> {
  const stored = await inSpan('delivery', {}, parent, async (_span, context) => {
    await inSpan('identity check', {}, context, tick);
    await inSpan('S/4HANA read', {}, context, (_read, readContext) => inSpan('GET', {}, readContext, tick));
    return inSpan('transaction', {}, context, async (_tx, txContext) => traceparentOf(txContext));
  });
  await inSpan('send mail', { links: linkTo(stored) }, ROOT_CONTEXT, tick);
  return stored;
}

const PRODUCER = '4bf92f3577b34da6a3ce929d0e0e4736';
const producer = (tracing: Tracing, flags: '00' | '01') =>
  tracing.producerContext(`00-${PRODUCER}-00f067aa0ba902b7-${flags}`, undefined);
const EVERY_SPAN = ['identity check', 'GET', 'S/4HANA read', 'transaction', 'delivery', 'send mail'];

describe('OTEL_TRACES_SAMPLER', () => {
  it('samples about one delivery in ten by default, each whole with its email or not at all', async () => {
    expect(DEFAULT_SAMPLER).toEqual({ name: 'parentbased_traceidratio', ratio: 0.1 });
    const tracing = await register(DEFAULT_SAMPLER);
    const deliveries = 1000;
    for (let i = 0; i < deliveries; i++) await deliverAndSend(tracing);
    const spans = exporter.getFinishedSpans();
    const sampled = new Set(spans.filter((s) => s.name === 'delivery').map((s) => s.spanContext().traceId));
    // A binomial count of 1,000 at 0.1: 100 on average, outside 50 to 170 far less than once in a million.
    expect(sampled.size).toBeGreaterThan(50);
    expect(sampled.size).toBeLessThan(170);
    // An unsampled delivery records nothing; a sampled one every span below it, and its email's send.
    for (const name of EVERY_SPAN) {
      expect(spans.filter((s) => s.name === name).length, name).toBe(sampled.size);
    }
    for (const span of spans) {
      const traceId = span.name === 'send mail' ? span.links[0]?.context.traceId : span.spanContext().traceId;
      expect(sampled.has(traceId as string), span.name).toBe(true);
    }
  });

  it('follows the producer’s decision by default: a sampled parent’s delivery is recorded whole, an unsampled one not at all', async () => {
    const tracing = await register(DEFAULT_SAMPLER);
    for (let i = 0; i < 20; i++) await deliverAndSend(tracing, producer(tracing, '00'));
    expect(exported()).toEqual([]);
    await deliverAndSend(tracing, producer(tracing, '01'));
    expect(exported()).toEqual(EVERY_SPAN);
    for (const span of exporter.getFinishedSpans().slice(0, 5)) {
      expect(span.spanContext().traceId).toBe(PRODUCER);
    }
  });

  it('traces every delivery and its email with parentbased_always_on', async () => {
    const tracing = await register({ name: 'parentbased_always_on', ratio: 1 });
    await deliverAndSend(tracing);
    expect(exported()).toEqual(EVERY_SPAN);
  });

  it('drops the spans below an unsampled delivery and its email, instead of starting traces of their own', async () => {
    const tracing = await register({ name: 'parentbased_always_on', ratio: 1 });
    // The producer decided not to sample: the delivery follows it, and so must everything under and after it.
    const stored = await deliverAndSend(tracing, producer(tracing, '00'));
    expect(exported()).toEqual([]);
    // The unsampled decision is still stored, so that the email can follow it.
    expect(stored).toMatch(new RegExp(`^00-${PRODUCER}-[0-9a-f]{16}-00$`));
  });

  it('starts no span for the email of an unsampled delivery, and starts the one of a sampled delivery', async () => {
    const asked: string[] = [];
    const tracing = await register(DEFAULT_SAMPLER, asked);
    await deliverAndSend(tracing, producer(tracing, '00'));
    expect(asked).toEqual(['delivery']);
    expect(exported()).toEqual([]);
    await deliverAndSend(tracing, producer(tracing, '01'));
    expect(asked.slice(1)).toEqual([
      'delivery',
      'identity check',
      'S/4HANA read',
      'GET',
      'transaction',
      'send mail',
    ]);
    expect(exported()).toEqual(EVERY_SPAN);
  });

  it('samples no delivery of its own at ratio 0, but follows a producer that sampled, email included', async () => {
    const tracing = await register({ name: 'parentbased_traceidratio', ratio: 0 });
    await deliverAndSend(tracing);
    expect(exported()).toEqual([]);
    await deliverAndSend(tracing, producer(tracing, '01'));
    expect(exported()).toEqual(EVERY_SPAN);
    const spans = exporter.getFinishedSpans();
    for (const span of spans.slice(0, 5)) expect(span.spanContext().traceId).toBe(PRODUCER);
    expect(spans[5]?.links[0]?.context.traceId).toBe(PRODUCER);
  });

  it('decides on the trace id alone with traceidratio, ignoring the producer', async () => {
    const tracing = await register({ name: 'traceidratio', ratio: 0 });
    await deliverAndSend(tracing, producer(tracing, '01'));
    expect(exported()).toEqual([]);
  });

  it('traces every delivery with always_on, whatever the producer decided', async () => {
    const tracing = await register({ name: 'always_on', ratio: 1 });
    await deliverAndSend(tracing, producer(tracing, '00'));
    expect(exported()).toEqual(EVERY_SPAN);
  });
});
