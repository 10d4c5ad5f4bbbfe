// A TCP relay in front of the real PostgreSQL, to make the database unreachable for one service without touching
// the shared server: `blackhole` holds back every byte both ways (and every close) and leaves new connections
// unanswered, as a network partition or a host gone mid-failover does; `forward` delivers what each socket was
// held back, in one write per socket, and lets everything through again. `resetOn` resets a client's connection
// as soon as it sends a chunk holding a given text, before the target sees it: a session gone mid-statement.
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  /** The target URL with host and port pointed at the relay. */
  url: string;
  blackhole(): void;
  forward(): void;
  resetOn(text: string): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetUrl: string): Promise<TcpProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const heldData = new Map<Socket, Buffer[]>();
  const heldEnds = new Set<Socket>();
  const heldConnections: Socket[] = [];
  let silent = false;
  let resetText: string | undefined;
  const relay = (from: Socket, to: Socket, fromClient: boolean) => {
    from.on('data', (chunk: Buffer) => {
      if (fromClient && resetText !== undefined && chunk.includes(resetText)) {
        from.resetAndDestroy();
        to.destroy();
      } else if (silent) heldData.set(to, [...(heldData.get(to) ?? []), chunk]);
      else to.write(chunk);
    });
    from.on('close', () => {
      if (silent) heldEnds.add(to);
      else to.end();
    });
    from.on('error', () => from.destroy());
  };
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const open = (client: Socket) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    track(upstream);
    relay(client, upstream, true);
    relay(upstream, client, false);
  };
  const server = createServer((client) => {
    track(client);
    if (!silent) return open(client);
    client.on('error', () => client.destroy());
    heldConnections.push(client);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the relay has no port');
  const url = new URL(targetUrl);
  url.host = `127.0.0.1:${address.port}`;
  return {
    url: url.toString(),
    blackhole() {
      silent = true;
    },
    forward() {
      silent = false;
      for (const [to, chunks] of heldData) to.write(Buffer.concat(chunks));
      heldData.clear();
      for (const to of heldEnds) to.end();
      heldEnds.clear();
      for (const client of heldConnections.splice(0)) open(client);
    },
    resetOn(text) {
      resetText = text;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
