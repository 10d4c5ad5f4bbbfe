// Traces as an operator's OpenTelemetry backend receives them: a real OTLP/HTTP receiver in this process, the
// service's own exporter, real PostgreSQL, the broker, S/4HANA and SMTP stand-ins. Asserts the span tree of a
// delivery, the producer's trace continued from the CloudEvents `traceparent` in either mode, and the mail send
// linked to the event that queued it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { startTestService } from '../support/harness.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  links?: Array<{ traceId: string; spanId: string }>;
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
}

// OTLP SpanKind numbers.
const INTERNAL = 1;
const CLIENT = 3;
const CONSUMER = 5;
const PRODUCER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PRODUCER_SPAN = '00f067aa0ba902b7';
const AMQP_TRACE = '0af7651916cd43dd8448eb211c80319c';
const AMQP_SPAN = 'b7ad6b7169203331';
const UNSAMPLED_TRACE = '5c1c63257de34c67a1d2bbd3f1bb9d1b';

const world = useWorld();
let queue: TestQueue;
let receiver: Server;
const spans: Span[] = [];
const exportHeaders: string[] = [];

function flatten(otlp: OtlpSpan): Span {
  const attributes: Record<string, unknown> = {};
  for (const { key, value } of otlp.attributes) attributes[key] = Object.values(value)[0];
  return {
    traceId: otlp.traceId,
    spanId: otlp.spanId,
    parentSpanId: otlp.parentSpanId || undefined,
    name: otlp.name,
    kind: otlp.kind,
    attributes,
    links: otlp.links ?? [],
  };
}

beforeAll(async () => {
  queue = await createTestQueue('fon-tracing');
  for (const salesOrder of ['7200001', '7200002', '7200003', '7200004']) {
    world.s4.setOrder({
      salesOrder,
      lastChangeDateTime: '2026-11-30T10:00:00Z',
      requestedDeliveryDate: '2026-12-20',
    });
  }
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      exportHeaders.push(
        `${req.method} ${req.url} ${req.headers['content-type']} ${req.headers['x-tenant']}`,
      );
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{
          resource: { attributes: OtlpSpan['attributes'] };
          scopeSpans: Array<{ spans: OtlpSpan[] }>;
        }>;
      };
      for (const resource of body.resourceSpans) {
        const service = resource.resource.attributes.find((a) => a.key === 'service.name');
        expect(service?.value).toEqual({ stringValue: 'fleet-order-notifier' });
        for (const scope of resource.scopeSpans) spans.push(...scope.spans.map(flatten));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const service = await startTestService({
    ...world.endpoints(),
    queueAddress: queue.address,
    env: {
      INGEST: 'amqp,webhook',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=fleet%20one',
      // The default sampler, parent-based, with every delivery without a producer's decision sampled (the default
      // ratio, 0.1, is tested in test/unit/tracingSampling.test.ts): the event without traceparent is traced.
      OTEL_TRACES_SAMPLER_ARG: '1',
    },
  });
  try {
    // Structured over the webhook, with the producer's traceparent among the attributes.
    const structured = await fetch(`${service.url}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: salesOrderEvent({
        id: 'traced-structured',
        salesOrder: '7200001',
        envelope: { traceparent: `00-${PRODUCER_TRACE}-${PRODUCER_SPAN}-01`, tracestate: 'sap=1' },
      }),
    });
    expect(structured.status).toBe(200);
    // Binary over AMQP, the extension as an application property.
    await world.publisher.send(queue.address, [
      {
        body: JSON.stringify({ SalesOrder: '7200002' }),
        contentType: 'application/json',
        properties: {
          'cloudEvents:specversion': '1.0',
          'cloudEvents:id': 'traced-binary',
          'cloudEvents:source': '/default/sap.s4.beh/244572008',
          'cloudEvents:type': 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1',
          'cloudEvents:traceparent': `00-${AMQP_TRACE}-${AMQP_SPAN}-01`,
        },
      },
    ]);
    // No traceparent: the trace starts at the service.
    await fetch(`${service.url}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: salesOrderEvent({ id: 'untraced', salesOrder: '7200003' }),
    });
    // The producer decided not to sample: the parent-based default exports nothing of it, its email included.
    await fetch(`${service.url}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: salesOrderEvent({
        id: 'unsampled',
        salesOrder: '7200004',
        envelope: { traceparent: `00-${UNSAMPLED_TRACE}-${PRODUCER_SPAN}-00` },
      }),
    });
    await world.smtp.waitForCount(4);
    await eventually('the deliveries to settle', () => queue.isIdle());
  } finally {
    // Shutdown flushes the span processor: every span is exported before stop() returns.
    await service.stop();
  }
}, 60_000);

afterAll(async () => {
  await queue?.delete();
  await new Promise((resolve) => receiver?.close(resolve));
});

function delivery(id: string): Span {
  const found = spans.filter(
    (s) => s.name === 'process event' && s.attributes['cloudevents.event_id'] === id,
  );
  expect(found, id).toHaveLength(1);
  return found[0] as Span;
}

const childrenOf = (parent: Span) => spans.filter((s) => s.parentSpanId === parent.spanId);

describe('traces over OTLP/HTTP', () => {
  it('exports JSON to <endpoint>/v1/traces with the configured headers', () => {
    expect(new Set(exportHeaders)).toEqual(new Set(['POST /v1/traces application/json fleet one']));
  });

  it('gives a delivery one consumer span with the event, the channel and the outcome, continuing the producer trace', () => {
    const span = delivery('traced-structured');
    expect(span).toMatchObject({ traceId: PRODUCER_TRACE, parentSpanId: PRODUCER_SPAN, kind: CONSUMER });
    expect(span.attributes).toEqual({
      'fon.channel': 'webhook',
      'cloudevents.event_source': '/default/sap.s4.beh/244572008',
      'cloudevents.event_id': 'traced-structured',
      'cloudevents.event_type': 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1',
      'sap.sales_order': '7200001',
      'fon.outcome': 'applied',
    });
  });

  it('continues the trace of a binary-mode event over AMQP from its cloudEvents:traceparent', () => {
    const span = delivery('traced-binary');
    expect(span).toMatchObject({ traceId: AMQP_TRACE, parentSpanId: AMQP_SPAN });
    expect(span.attributes['fon.channel']).toBe('amqp');
  });

  it('starts a new trace for an event without traceparent', () => {
    const span = delivery('untraced');
    expect(span.parentSpanId).toBeUndefined();
    expect([PRODUCER_TRACE, AMQP_TRACE]).not.toContain(span.traceId);
  });

  it('exports nothing of an event whose producer did not sample it, neither its children nor its email', () => {
    expect(spans.filter((s) => s.attributes['cloudevents.event_id'] === 'unsampled')).toEqual([]);
    expect(spans.filter((s) => s.traceId === UNSAMPLED_TRACE)).toEqual([]);
    expect(spans.filter((s) => s.links.some((link) => link.traceId === UNSAMPLED_TRACE))).toEqual([]);
    // Every span exported belongs to one of the three sampled deliveries' traces, or links to one.
    const sampled = new Set(
      ['traced-structured', 'traced-binary', 'untraced'].map((id) => delivery(id).traceId),
    );
    for (const span of spans) {
      expect(
        sampled.has(span.traceId) || span.links.some((link) => sampled.has(link.traceId)),
        span.name,
      ).toBe(true);
    }
  });

  it('puts the identity check, the S/4HANA read with its HTTP GET, and the transaction under the delivery', () => {
    const span = delivery('traced-structured');
    const children = childrenOf(span);
    expect(children.map((c) => c.name)).toEqual(['identity check', 'S/4HANA read', 'transaction']);
    for (const child of children) expect(child.traceId).toBe(PRODUCER_TRACE);
    const [identity, read, transaction] = children as [Span, Span, Span];
    expect(identity).toMatchObject({ kind: INTERNAL, attributes: { 'db.system.name': 'postgresql' } });
    expect(transaction).toMatchObject({
      kind: INTERNAL,
      attributes: { 'db.system.name': 'postgresql' },
    });
    expect(read).toMatchObject({ kind: CLIENT, attributes: { 'sap.sales_order': '7200001' } });
    const gets = childrenOf(read);
    expect(gets).toHaveLength(1);
    const s4Url = new URL(world.s4.url);
    expect(gets[0]).toMatchObject({
      name: 'GET',
      kind: CLIENT,
      attributes: {
        'http.request.method': 'GET',
        'http.response.status_code': 200,
        'server.address': s4Url.hostname,
        'server.port': Number(s4Url.port),
      },
    });
    expect(gets[0]?.attributes['url.full']).toContain('7200001');
  });

  it('sends each email in a span of its own, linked to the transaction that queued it', () => {
    for (const id of ['traced-structured', 'traced-binary', 'untraced']) {
      const transaction = childrenOf(delivery(id)).find((c) => c.name === 'transaction') as Span;
      const sends = spans.filter(
        (s) => s.name === 'send mail' && s.links.some((link) => link.spanId === transaction.spanId),
      );
      expect(sends, id).toHaveLength(1);
      expect(sends[0]?.links).toEqual([expect.objectContaining({ traceId: transaction.traceId })]);
      expect(sends[0]?.parentSpanId).toBeUndefined();
      expect(sends[0]?.attributes['sap.sales_order']).toBe(delivery(id).attributes['sap.sales_order']);
    }
  });
});
