import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type PgRelay, startPgRelay } from '../../bench/pgRelay.js';

// The relay only passes bytes: a loopback echo server stands in for PostgreSQL.
async function echoServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Sends `chunks` one by one through `url`'s host and port; resolves with the echo and the time to the last byte. */
async function roundTrip(url: string, chunks: string[]): Promise<{ echo: string; ms: number }> {
  const { hostname, port } = new URL(url);
  const expected = chunks.join('').length;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let echo = '';
    let started = 0;
    socket.on('error', reject);
    socket.on('connect', () => {
      started = performance.now();
      for (const chunk of chunks) socket.write(chunk);
    });
    socket.on('data', (data) => {
      echo += data.toString('utf8');
      if (echo.length >= expected) {
        socket.destroy();
        resolve({ echo, ms: performance.now() - started });
      }
    });
  });
}

describe('the PostgreSQL relay', () => {
  let relay: PgRelay | undefined;
  let echo: Server | undefined;
  afterEach(async () => {
    await relay?.close();
    await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
    relay = undefined;
    echo = undefined;
  });

  it('adds its delay once to chunks sent together, and keeps them in order', async () => {
    const target = await echoServer();
    echo = target.server;
    relay = await startPgRelay(`postgres://postgres@127.0.0.1:${target.port}/db`, 200);
    expect(new URL(relay.url).port).not.toBe(String(target.port));
    const chunks = Array.from({ length: 20 }, (_, i) => `${i},`);
    const { echo: answer, ms } = await roundTrip(relay.url, chunks);
    expect(answer).toBe(chunks.join(''));
    expect(ms).toBeGreaterThanOrEqual(199);
    // Pipelined statements share one delay, as on a network: twenty delays in turn would take 4 s.
    expect(ms).toBeLessThan(400);
    // What it held is measured: each chunk at least the delay (a timer may fire up to a millisecond early).
    const held = relay.takeHeldMs();
    expect(held.length).toBeGreaterThanOrEqual(1);
    for (const ms of held) expect(ms).toBeGreaterThanOrEqual(199);
    expect(relay.takeHeldMs()).toEqual([]);
  });

  it('serves a database named localhost, passing chunks unchanged without a delay', async () => {
    const target = await echoServer();
    echo = target.server;
    relay = await startPgRelay(`postgres://postgres@localhost:${target.port}/db`, 0);
    const { echo: answer } = await roundTrip(relay.url, ['select ', '1']);
    expect(answer).toBe('select 1');
    expect(new URL(relay.url).hostname).toBe('127.0.0.1');
  });

  it('refuses a database that is not on loopback', async () => {
    await expect(startPgRelay('postgres://postgres@db.example.com:5432/db', 1)).rejects.toThrow(
      /loopback only/,
    );
  });
});
