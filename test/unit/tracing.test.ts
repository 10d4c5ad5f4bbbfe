// The span helpers against the real SDK, registered as startTracing registers it (no context manager), with
// an in-memory exporter: a span's parent is the context it is handed, and a failure is recorded on its span.
import { propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inSpan, linkTo, producerContext, ROOT_CONTEXT, traceparentOf } from '../../src/telemetry/tracing.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => provider.register({ contextManager: null }));
beforeEach(() => exporter.reset());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
});

const spanNamed = (name: string) => {
  const found = exporter.getFinishedSpans().filter((span) => span.name === name);
  expect(found, name).toHaveLength(1);
  return found[0] as (typeof found)[number];
};
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('inSpan', () => {
  it('puts each span under the context it is handed, across awaits and with other deliveries in flight', async () => {
    const delivery = (id: string) =>
      inSpan(`delivery ${id}`, {}, ROOT_CONTEXT, async (_span, context) => {
        await tick();
        await inSpan(`read ${id}`, {}, context, async (_read, readContext) => {
          await tick();
          await inSpan(`GET ${id}`, {}, readContext, tick);
        });
        await inSpan(`transaction ${id}`, {}, context, tick);
      });
    await Promise.all([delivery('a'), delivery('b')]);

    for (const id of ['a', 'b']) {
      const root = spanNamed(`delivery ${id}`);
      expect(root.parentSpanContext).toBeUndefined();
      const read = spanNamed(`read ${id}`);
      expect(read.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
      expect(spanNamed(`GET ${id}`).parentSpanContext?.spanId).toBe(read.spanContext().spanId);
      expect(spanNamed(`transaction ${id}`).parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    }
    expect(spanNamed('read a').spanContext().traceId).not.toBe(spanNamed('read b').spanContext().traceId);
  });

  it('continues the trace a producer context names', async () => {
    const producer = producerContext('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', undefined);
    await inSpan('delivery', {}, producer, tick);
    expect(spanNamed('delivery').spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(spanNamed('delivery').parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
  });

  it('marks the span failed with the error and rethrows it', async () => {
    const failure = new Error('S/4HANA answered 503');
    await expect(
      inSpan('S/4HANA read', {}, ROOT_CONTEXT, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    const span = spanNamed('S/4HANA read');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'S/4HANA answered 503' });
    expect(span.events.map((event) => event.name)).toEqual(['exception']);
  });

  it("gives a span's traceparent, which a later span links back to", async () => {
    const stored = await inSpan('transaction', {}, ROOT_CONTEXT, async (_span, context) =>
      traceparentOf(context),
    );
    expect(traceparentOf(ROOT_CONTEXT)).toBeNull();
    await inSpan('send mail', { links: linkTo(stored) }, ROOT_CONTEXT, tick);
    const transaction = spanNamed('transaction').spanContext();
    expect(spanNamed('send mail').links.map((link) => link.context)).toEqual([
      expect.objectContaining({ traceId: transaction.traceId, spanId: transaction.spanId }),
    ]);
  });
});
