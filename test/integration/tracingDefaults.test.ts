// Tracing at its defaults, as an operator who sets only an OTLP endpoint gets it: head sampling, parent-based,
// one delivery in ten. A real OTLP/HTTP receiver on loopback, the service's own exporter, real PostgreSQL and the
// S/4HANA and SMTP stand-ins. A producer's decision is followed, sampled or not; a delivery of the service's own
// trace is recorded whole, its email's send included, or not at all.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import { startTestService } from '../support/harness.js';
import { useWorld } from '../support/world.js';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  links?: Array<{ traceId: string; spanId: string }>;
}

const SAMPLED_TRACE = '6e0c63257de34c67a1d2bbd3f1bb9d1b';
const UNSAMPLED_TRACE = '7f1c63257de34c67a1d2bbd3f1bb9d1c';
const PRODUCER_SPAN = '00f067aa0ba902b7';
/** Deliveries without a producer's trace: all of them sampled at 0.1 has a chance of 10^-40. */
const OWN_TRACES = 40;
const FIRST_ORDER = 7_400_000;

const world = useWorld();
let receiver: Server;
const spans: Span[] = [];

const eventId = (span: Span) =>
  span.attributes.find((a) => a.key === 'cloudevents.event_id')?.value.stringValue as string | undefined;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }>;
      };
      for (const resource of body.resourceSpans) {
        for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const events = [
    ...Array.from({ length: OWN_TRACES }, (_, i) => ({ id: `own-${i}`, envelope: {} })),
    { id: 'producer-sampled', envelope: { traceparent: `00-${SAMPLED_TRACE}-${PRODUCER_SPAN}-01` } },
    { id: 'producer-unsampled', envelope: { traceparent: `00-${UNSAMPLED_TRACE}-${PRODUCER_SPAN}-00` } },
  ];
  for (let i = 0; i < events.length; i++) {
    world.s4.setOrder({
      salesOrder: String(FIRST_ORDER + i),
      lastChangeDateTime: '2026-11-30T10:00:00Z',
      requestedDeliveryDate: '2026-12-20',
    });
  }
  const service = await startTestService({
    ...world.endpoints(),
    // Only the endpoint: the sampler is the default.
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}` },
  });
  try {
    for (const [i, { id, envelope }] of events.entries()) {
      const answer = await fetch(`${service.url}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: salesOrderEvent({ id, salesOrder: String(FIRST_ORDER + i), envelope }),
      });
      expect(answer.status).toBe(200);
    }
    await world.smtp.waitForCount(events.length);
  } finally {
    // Shutdown flushes the span processor: every span is exported before stop() returns.
    await service.stop();
  }
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
});

/** Every span of one delivery: those of its trace, and the mail send linked into it. */
function spansOf(id: string): Span[] {
  const delivery = spans.find((s) => eventId(s) === id);
  if (delivery === undefined) return [];
  return spans.filter(
    (s) => s.traceId === delivery.traceId || (s.links ?? []).some((l) => l.traceId === delivery.traceId),
  );
}
const names = (list: Span[]) => list.map((s) => s.name).sort();
const WHOLE = ['GET', 'S/4HANA read', 'identity check', 'process event', 'send mail', 'transaction'];

describe('tracing at its defaults', () => {
  it('records the whole delivery under a producer that sampled it, its email included', () => {
    const recorded = spansOf('producer-sampled');
    expect(names(recorded)).toEqual(WHOLE);
    const delivery = recorded.find((s) => eventId(s) === 'producer-sampled') as Span;
    expect(delivery).toMatchObject({ traceId: SAMPLED_TRACE, parentSpanId: PRODUCER_SPAN });
    for (const child of recorded.filter((s) => s.parentSpanId === delivery.spanId)) {
      expect(child.traceId).toBe(SAMPLED_TRACE);
    }
  });

  it('records nothing of a delivery under a producer that did not sample it', () => {
    expect(spans.filter((s) => eventId(s) === 'producer-unsampled')).toEqual([]);
    expect(spans.filter((s) => s.traceId === UNSAMPLED_TRACE)).toEqual([]);
    expect(spans.filter((s) => (s.links ?? []).some((l) => l.traceId === UNSAMPLED_TRACE))).toEqual([]);
  });

  it('samples the deliveries of its own traces, each recorded whole or not at all', () => {
    const sampled = Array.from({ length: OWN_TRACES }, (_, i) => `own-${i}`).filter(
      (id) => spansOf(id).length > 0,
    );
    expect(sampled.length).toBeLessThan(OWN_TRACES);
    for (const id of sampled) expect(names(spansOf(id)), id).toEqual(WHOLE);
    // No span outside a recorded delivery: nothing below an unsampled one was exported.
    const traces = new Set([SAMPLED_TRACE, ...sampled.map((id) => spansOf(id)[0]?.traceId)]);
    for (const span of spans) {
      expect(
        traces.has(span.traceId) || (span.links ?? []).some((l) => traces.has(l.traceId)),
        span.name,
      ).toBe(true);
    }
  });
});
