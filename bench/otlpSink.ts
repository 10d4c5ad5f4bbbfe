// A trace receiver for the tracing pairs: accepts OTLP/HTTP exports and drops them, so the benchmark measures
// what tracing costs the service (building spans, batching, exporting), not what a backend does with them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  /** Export requests received so far: proof the tracing pairs really exported. */
  exports(): number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') exports += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
