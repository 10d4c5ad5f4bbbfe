// PostgreSQL one network hop away: a TCP relay on loopback that holds each chunk from the client for `delayMs`
// before passing it on, so that every round trip (a statement, a BEGIN, a COMMIT) costs that much more, as from
// an application in one availability zone to a database in another. Answers pass back at once.
import { createConnection, createServer, type Socket } from 'node:net';

export interface PgRelay {
  /** `databaseUrl` with its host and port replaced by the relay's. */
  url: string;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export async function startPgRelay(databaseUrl: string, delayMs: number): Promise<PgRelay> {
  const target = new URL(databaseUrl);
  if (!LOOPBACK.has(target.hostname))
    throw new Error(`the relay serves loopback only, not ${target.hostname}`);
  const targetPort = Number(target.port || 5432);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: targetPort, noDelay: true });
    client.setNoDelay(true);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.pipe(client);
    // Timers of the same duration fire in the order they were set: the chunks stay in order.
    client.on('data', (chunk) => {
      if (delayMs === 0) upstream.write(chunk);
      else setTimeout(() => upstream.writable && upstream.write(chunk), delayMs);
    });
    client.once('end', () => setTimeout(() => upstream.end(), delayMs));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the relay has no port');
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
