// PostgreSQL one network hop away: a TCP relay on loopback that holds each chunk from the client for `delayMs`
// before passing it on, so that every round trip (a statement, a BEGIN, a COMMIT) costs that much more, as from
// an application in one availability zone to a database in another. Answers pass back at once. A timer waits at
// least its delay, later on a busy machine: the relay measures what it really held each chunk, and the bench
// prints that beside the nominal delay.
import { createConnection, createServer, type Socket } from 'node:net';

export interface PgRelay {
  /** `databaseUrl` with its host and port replaced by the relay's. */
  url: string;
  /** What the relay really held each chunk since the last call, in ms, and forgets them. */
  takeHeldMs(): number[];
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export async function startPgRelay(databaseUrl: string, delayMs: number): Promise<PgRelay> {
  const target = new URL(databaseUrl);
  if (!LOOPBACK.has(target.hostname))
    throw new Error(`the relay serves loopback only, not ${target.hostname}`);
  const targetPort = Number(target.port || 5432);
  const sockets = new Set<Socket>();
  let held: number[] = [];
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
      const received = performance.now();
      const pass = () => {
        held.push(performance.now() - received);
        if (upstream.writable) upstream.write(chunk);
      };
      if (delayMs === 0) pass();
      else setTimeout(pass, delayMs);
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
    takeHeldMs() {
      const taken = held;
      held = [];
      return taken;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
