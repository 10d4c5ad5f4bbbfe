// A TCP relay in front of the real PostgreSQL, to make the database unreachable for one service without touching
// the shared server: `blackhole` holds back every byte both ways and leaves new connections unanswered, as a
// network partition or a host gone mid-failover does; `forward` delivers what was held and lets everything through.
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  /** The target URL with host and port pointed at the relay. */
  url: string;
  blackhole(): void;
  forward(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetUrl: string): Promise<TcpProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const held: Array<() => void> = [];
  let silent = false;
  const relay = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => {
      if (silent) held.push(() => to.write(chunk));
      else to.write(chunk);
    });
    from.on('close', () => to.destroy());
    from.on('error', () => from.destroy());
  };
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const open = (client: Socket) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    track(upstream);
    relay(client, upstream);
    relay(upstream, client);
  };
  const server = createServer((client) => {
    track(client);
    if (silent) {
      client.on('error', () => client.destroy());
      held.push(() => open(client));
    } else open(client);
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
      for (const deliver of held.splice(0)) deliver();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
