// Traces over OpenTelemetry (OTLP/HTTP), off unless an OTLP endpoint is configured. Every module speaks only to
// @opentelemetry/api, whose tracer does nothing and records nothing until a provider is registered; the SDK and
// the exporter are imported by startTracing alone, so a service without an endpoint never loads them.
import {
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanOptions,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

export { type Context, ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  tracesUrl: string;
  /** OTEL_EXPORTER_OTLP_HEADERS, e.g. an authorization header for a collector. */
  headers: Record<string, string>;
  serviceName: string;
}

export interface Tracing {
  /** Exports what is still buffered and unregisters the provider. */
  shutdown(): Promise<void>;
}

const tracer = trace.getTracer('fleet-order-notifier');

export async function startTracing(config: TracingConfig): Promise<Tracing> {
  const [{ BatchSpanProcessor, NodeTracerProvider }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers })),
    ],
  });
  // Registers the provider, AsyncLocalStorage context and the W3C trace-context propagator globally.
  provider.register();
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** Runs `work` in a new span, active for everything it awaits; a throw marks the span failed and is rethrown. */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  return tracer.startActiveSpan(name, options, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error)?.message ?? err) });
      throw err;
    } finally {
      span.end();
    }
  });
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

/** The active trace context, to run later work (a batched read) under the span that asked for it. */
export function activeContext(): Context {
  return context.active();
}

export function withContext<T>(parent: Context, work: () => T): T {
  return context.with(parent, work);
}

/** The active span as a W3C `traceparent`, to be stored with work done later (the mail outbox); null untraced. */
export function activeTraceparent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** A link to the span a stored `traceparent` names: work done later points at the event that caused it. */
export function linkTo(traceparent: string | null): Link[] {
  if (traceparent === null) return [];
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return spanContext === undefined ? [] : [{ context: spanContext }];
}
