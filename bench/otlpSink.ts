// A trace receiver for the tracing pairs: accepts OTLP/HTTP exports and drops them, so the benchmark measures
// what tracing costs the service (building spans, batching, exporting), not what a backend does with them. While
// asked to (a traced steady window), it keeps the spans of OTLP/HTTP JSON exports instead.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  /** Export requests received so far: proof the tracing pairs really exported. */
  exports(): number;
  /** Keeps the spans of the exports from now on; `takeSpans` hands them over and stops keeping. */
  keepSpans(): void;
  takeSpans(): ExportedSpan[];
  close(): Promise<void>;
}

/** A span as OTLP/HTTP JSON carries it, with the attributes this benchmark reads. */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startMs: number;
  endMs: number;
  eventId?: string;
}

interface OtlpJson {
  resourceSpans?: Array<{
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        startTimeUnixNano: string;
        endTimeUnixNano: string;
        attributes?: Array<{ key: string; value: { stringValue?: string } }>;
      }>;
    }>;
  }>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  let kept: Buffer[][] | undefined;
  const server = createServer((req, res) => {
    const body: Buffer[] = [];
    if (kept === undefined) req.resume();
    else req.on('data', (chunk: Buffer) => body.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        exports += 1;
        kept?.push(body);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    keepSpans() {
      kept = [];
    },
    takeSpans() {
      const bodies = kept ?? [];
      kept = undefined;
      return bodies.flatMap((body) => spansOf(JSON.parse(Buffer.concat(body).toString('utf8')) as OtlpJson));
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function spansOf(exported: OtlpJson): ExportedSpan[] {
  return (exported.resourceSpans ?? []).flatMap((resource) =>
    (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => {
        const eventId = span.attributes?.find((a) => a.key === 'cloudevents.event_id')?.value.stringValue;
        return {
          traceId: span.traceId,
          spanId: span.spanId,
          ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
          name: span.name,
          startMs: Number(BigInt(String(span.startTimeUnixNano)) / 1000n) / 1000,
          endMs: Number(BigInt(String(span.endTimeUnixNano)) / 1000n) / 1000,
          ...(eventId === undefined ? {} : { eventId }),
        };
      }),
    ),
  );
}
