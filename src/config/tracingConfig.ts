// OTLP trace export, from the OpenTelemetry specification's exporter and sampler variables as every
// OpenTelemetry SDK reads them; undefined without an endpoint: no tracing, and the SDK is never loaded.
import { SAMPLERS, type SamplerName, type TracingConfig } from '../telemetry/tracing.js';
import type { EnvReader } from './envReader.js';

export function tracingConfig(read: EnvReader): TracingConfig | undefined {
  const { problems } = read;
  if (read.optional('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const signal = read.optional('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = read.optional('OTEL_EXPORTER_OTLP_ENDPOINT');
  // The signal's own variable is used as given; the base one gets the signal's path appended.
  const tracesUrl = signal ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (tracesUrl === undefined) return undefined;
  if (!/^https?:\/\/[^/]/.test(tracesUrl)) {
    problems.push(`the OTLP endpoint must be an http(s) URL, got "${tracesUrl}"`);
    return undefined;
  }
  const headers: Record<string, string> = {};
  for (const pair of read.list('OTEL_EXPORTER_OTLP_HEADERS')) {
    const at = pair.indexOf('=');
    if (at <= 0) {
      problems.push('OTEL_EXPORTER_OTLP_HEADERS takes key=value pairs, comma-separated');
      continue;
    }
    // Values are URL-encoded, as the OpenTelemetry specification says (W3C baggage format).
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      problems.push('OTEL_EXPORTER_OTLP_HEADERS has a malformed %-escape');
    }
  }
  return {
    tracesUrl,
    headers,
    serviceName: read.text('OTEL_SERVICE_NAME', 'fleet-order-notifier'),
    sampler: samplerConfig(read),
  };
}

/**
 * Head sampling, parent-based, one delivery in ten by default, so that tracing can stay on: a delivery whose
 * producer sent a `traceparent` follows the producer's decision, any other is sampled by its trace id. The
 * specification's defaults (parentbased_always_on, a ratio of 1) trace every delivery, which costs an instance
 * near its ceiling a large share of its CPU (docs/operations.md, Traces).
 */
export const DEFAULT_SAMPLER: TracingConfig['sampler'] = { name: 'parentbased_traceidratio', ratio: 0.1 };

function samplerConfig(read: EnvReader): TracingConfig['sampler'] {
  const { problems } = read;
  const name = read.text('OTEL_TRACES_SAMPLER', DEFAULT_SAMPLER.name) as SamplerName;
  if (!SAMPLERS.includes(name)) {
    problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got "${name}"`);
  }
  const arg = read.optional('OTEL_TRACES_SAMPLER_ARG');
  const ratio = arg === undefined ? DEFAULT_SAMPLER.ratio : Number(arg);
  if (name.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1)) {
    problems.push(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${arg}"`);
  }
  return { name, ratio };
}
