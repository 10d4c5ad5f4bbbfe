// OTLP trace export, from the OpenTelemetry specification's exporter and sampler variables as every
// OpenTelemetry SDK reads them; undefined without an endpoint: no tracing, and the SDK is never loaded.
import { SAMPLERS, type SamplerName, type TracingConfig } from '../telemetry/tracing.js';
import type { Env } from './envReader.js';

export function tracingConfig(env: Env, problems: string[]): TracingConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const signal = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  // The signal's own variable is used as given; the base one gets the signal's path appended.
  const tracesUrl = signal || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (tracesUrl === undefined) return undefined;
  if (!/^https?:\/\/[^/]/.test(tracesUrl)) {
    problems.push(`the OTLP endpoint must be an http(s) URL, got "${tracesUrl}"`);
    return undefined;
  }
  const headers: Record<string, string> = {};
  for (const pair of (env.OTEL_EXPORTER_OTLP_HEADERS ?? '').split(',')) {
    if (pair.trim() === '') continue;
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
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'fleet-order-notifier',
    sampler: samplerConfig(env, problems),
  };
}

// The specification's default is parentbased_always_on: every delivery traced unless its producer said
// otherwise. The ratio defaults to 1, as the specification says.
function samplerConfig(env: Env, problems: string[]): TracingConfig['sampler'] {
  const name = (env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on') as SamplerName;
  if (!SAMPLERS.includes(name)) {
    problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got "${name}"`);
  }
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = arg ? Number(arg) : 1;
  if (name.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1)) {
    problems.push(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${arg}"`);
  }
  return { name, ratio };
}
