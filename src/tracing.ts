// Traces over OpenTelemetry (OTLP/HTTP), off unless an OTLP endpoint is configured. Every module speaks only to
// @opentelemetry/api, whose tracer does nothing and records nothing until a provider is registered; the SDK and
// the exporter are imported by startTracing alone, so a service without an endpoint never loads them.
// A span's parent is handed to it, never looked up: no context manager is registered. The SDK's, built on
// AsyncLocalStorage, hooks every promise and async resource of the process (about a hundred per new event); it
// was a third of the CPU that tracing cost and half of what tracing added to the old generation (README, Traces).
import {
  type Context,
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
  // Registers the provider and the W3C trace-context propagator globally; no context manager (see above).
  provider.register({ contextManager: null });
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
    },
  };
}

/**
 * Runs `work` in a new span under `parent`; a throw marks the span failed and is rethrown. `work` gets the
 * context to pass to the spans below this one (its parent's when the span is not recorded).
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  parent: Context,
  work: (span: Span, context: Context) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(name, options, parent);
  try {
    return await work(span, span.isRecording() ? trace.setSpan(parent, span) : parent);
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
  // Called for every effect: untraced, there is no span to name and nothing to build.
  if (trace.getSpanContext(context) === undefined) return null;
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
