import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server, type ServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpsStub {
  /** https://localhost:<port> */
  origin: string;
  port: number;
  /** For more than requests, such as WebSocket upgrades. */
  server: Server;
  close(): Promise<void>;
}

/**
 * An HTTPS server on localhost with the certificate of test/support/globalSetup.tls.ts, which the test processes
 * trust through NODE_EXTRA_CA_CERTS: token libraries fetch keys over https only, as they do in production.
 */
export async function startHttpsStub(
  handler: Handler,
  /** E.g. `requestCert` and `ca`, to see client certificates. */
  tls: ServerOptions = {},
): Promise<HttpsStub> {
  const certPath = process.env.TEST_TLS_CERT;
  const keyPath = process.env.TEST_TLS_KEY;
  if (!certPath || !keyPath) {
    throw new Error(
      'TEST_TLS_CERT/TEST_TLS_KEY unset: add test/support/globalSetup.tls.ts to vitest globalSetup',
    );
  }
  const server = createServer({ cert: readFileSync(certPath), key: readFileSync(keyPath), ...tls }, handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(0, 'localhost', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://localhost:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections(); // xssec's keep-alive sockets would hold close() open
      }),
  };
}

/** A JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
