// OTLP trace export, from the OpenTelemetry specification's exporter variables as every OpenTelemetry SDK
// reads them; undefined without an endpoint: no tracing, and the SDK is never loaded.
import type { TracingConfig } from '../tracing.js';
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
  return { tracesUrl, headers, serviceName: env.OTEL_SERVICE_NAME?.trim() || 'fleet-order-notifier' };
}
