// Traces over OpenTelemetry (OTLP/HTTP), off unless an OTLP endpoint is configured. Every module speaks only to
// @opentelemetry/api, whose tracer does nothing and records nothing until a provider is registered; the SDK and
// the exporter are imported by startTracing alone, so a service without an endpoint never loads them.
// A span's parent is handed to it, never looked up: no context manager is registered, as the SDK's, built on
// AsyncLocalStorage, hooks every promise and async resource of the process (docs/performance.md, Tracing).
import {
  type Context,
  INVALID_SPAN_CONTEXT,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  type SpanOptions,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace-node';

export { type Context, ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';

/** The samplers of the OpenTelemetry specification's OTEL_TRACES_SAMPLER that need no other service. */
export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  tracesUrl: string;
  /** OTEL_EXPORTER_OTLP_HEADERS, e.g. an authorization header for a collector. */
  headers: Record<string, string>;
  serviceName: string;
  /** OTEL_TRACES_SAMPLER, and OTEL_TRACES_SAMPLER_ARG for the ratio samplers. */
  sampler: { name: SamplerName; ratio: number };
}

export interface Tracing {
  /** Exports what is still buffered and unregisters the provider. */
  shutdown(): Promise<void>;
}

const tracer = trace.getTracer('fleet-order-notifier');
/** What work runs in when no span is started for it: a span that records nothing and starts nothing below it. */
const UNTRACED = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

const isSampled = (context: SpanContext) => (context.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;

export async function startTracing(config: TracingConfig): Promise<Tracing> {
  const [sdk, { OTLPTraceExporter }, { resourceFromAttributes }, { W3CTraceContextPropagator }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/core'),
    ]);
  const { BatchSpanProcessor, NodeTracerProvider } = sdk;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    sampler: samplerOf(sdk, config.sampler),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers })),
    ],
  });
  // Registers the provider and the W3C trace-context propagator globally; no context manager (see above). The
  // SDK's default propagator adds W3C baggage, which no event carries (the CloudEvents distributed-tracing
  // extension is traceparent and tracestate), and would look for it in every stored traceparent.
  provider.register({ contextManager: null, propagator: new W3CTraceContextPropagator() });
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
    },
  };
}

/**
 * The sampler OTEL_TRACES_SAMPLER names, built from the loaded SDK. A span without a parent that links to another
 * (the mail send, linked to the event that queued it) is sampled as that span was: a sampled event's trace leads
 * to its email, and an unsampled one costs nothing later.
 */
export function samplerOf(
  sdk: typeof import('@opentelemetry/sdk-trace-node'),
  { name, ratio }: TracingConfig['sampler'],
): Sampler {
  const on = new sdk.AlwaysOnSampler();
  const off = new sdk.AlwaysOffSampler();
  const root = name.endsWith('always_on')
    ? on
    : name.endsWith('always_off')
      ? off
      : new sdk.TraceIdRatioBasedSampler(ratio);
  const configured = name.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root;
  return {
    shouldSample(context, traceId, spanName, kind, attributes, links) {
      const linked = links[0]?.context;
      const sampler =
        linked === undefined || trace.getSpanContext(context) !== undefined
          ? configured
          : isSampled(linked)
            ? on
            : off;
      return sampler.shouldSample(context, traceId, spanName, kind, attributes, links);
    },
    toString: () => `FollowingLinks{${configured.toString()}}`,
  };
}

/**
 * Runs `work` in a new span under `parent`; a throw marks the span failed and is rethrown. `work` gets the
 * context to pass to the spans below this one: this span's, recorded or not, so that they follow its sampling
 * decision. Under a span that is not recorded (tracing off, or not sampled), `work` runs in that span and no
 * other is started; so it does, in a span that records nothing, for a span without a parent that follows an
 * unsampled link.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  parent: Context,
  work: (span: Span, context: Context) => Promise<T>,
): Promise<T> {
  // Below a span of ours that is not recorded, none is: with tracing off it is the API's no-op, and every sampler
  // built here decides a child as its parent was decided (the parent-based ones by the parent, the ratio by the
  // trace id they share). Starting one anyway would be most of what an unsampled delivery costs. A producer's span
  // (remote) is only a parent: the delivery under it is started, and samplers decide it.
  const above = trace.getSpan(parent);
  if (above !== undefined && !above.isRecording() && !above.spanContext().isRemote)
    return work(above, parent);
  // Likewise a span without a parent that follows an unsampled link (the mail send of an unsampled delivery):
  // samplerOf would decide it unsampled, after the SDK had built it.
  const linked = options.links?.[0]?.context;
  if (above === undefined && linked !== undefined && !isSampled(linked))
    return work(UNTRACED, trace.setSpan(parent, UNTRACED));
  const span = tracer.startSpan(name, options, parent);
  try {
    return await work(span, trace.setSpan(parent, span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error)?.message ?? err) });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * The context a received event continues: the producer's trace when the event carries the CloudEvents
 * distributed-tracing extension (`traceparent`, optionally `tracestate`), else a new trace.
 */
export function producerContext(traceparent: string | undefined, tracestate: string | undefined): Context {
  if (traceparent === undefined) return ROOT_CONTEXT;
  const carrier = tracestate === undefined ? { traceparent } : { traceparent, tracestate };
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** The span of `context` as a W3C `traceparent`, to be stored with work done later (the mail outbox); null untraced. */
export function traceparentOf(context: Context): string | null {
  // Called for every effect: with tracing off the span is the API's no-op, with no identity to name.
  const spanContext = trace.getSpanContext(context);
  if (spanContext === undefined || !trace.isSpanContextValid(spanContext)) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context, carrier);
  return carrier.traceparent ?? null;
}

/** A link to the span a stored `traceparent` names: work done later points at the event that caused it. */
export function linkTo(traceparent: string | null): Link[] {
  if (traceparent === null) return [];
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return spanContext === undefined ? [] : [{ context: spanContext }];
}
