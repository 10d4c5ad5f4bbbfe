// The pooled SMTP transport as it meets a real relay (smtp-server, which offers PIPELINING), seen through a
// loopback proxy that records what the client writes: how many connections carry a long run of emails, and how
// many socket writes one email takes.

import type { AddressInfo } from 'node:net';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpServer } from '../../sandbox/smtpServer.js';
import { smtpTransport } from '../../src/notifications/mailTransport.js';

let smtp: SmtpSink;
let proxy: Server;
let proxyUrl: string;
const sockets = new Set<Socket>();
/** Per connection, what the client wrote, one string per chunk the proxy received. */
let connections: string[][] = [];

beforeAll(async () => {
  smtp = await startSmtpServer();
  const target = new URL(smtp.url);
  proxy = createServer((client) => {
    const writes: string[] = [];
    connections.push(writes);
    const upstream = netConnect({ host: target.hostname, port: Number(target.port), noDelay: true });
    client.setNoDelay(true);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.once('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk: Buffer) => {
      writes.push(chunk.toString('latin1'));
      upstream.write(chunk);
    });
    upstream.pipe(client);
    client.once('end', () => upstream.end());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `smtp://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => proxy?.close(resolve));
  await smtp?.close();
});
beforeEach(() => {
  smtp.clear();
  connections = [];
});

const email = (i: number) => ({
  from: 'notifier@fleet.example',
  to: ['fleet-manager@fleet.example'],
  subject: `Sales order ${7_300_000 + i}`,
  messageId: `<transport-${i}-${Date.now()}@fleet.example>`,
  headers: { 'X-Sales-Order': String(7_300_000 + i) },
  text: `Sales order ${7_300_000 + i}\nStatus: Open\n`,
  html: `<p>Sales order ${7_300_000 + i}<br>\nStatus: Open</p>\n`,
});

describe('the pooled SMTP transport', () => {
  it('keeps one connection for a long run of emails, past nodemailer’s default of 100 a connection', async () => {
    const transport = smtpTransport(`${proxyUrl}?maxConnections=1`);
    try {
      for (let i = 0; i < 150; i++) await transport.send(email(i));
    } finally {
      transport.close();
    }
    expect(smtp.messages).toHaveLength(150);
    expect(connections).toHaveLength(1);
  });

  it('still reconnects as often as SMTP_URL asks, for a relay that limits messages per connection', async () => {
    const transport = smtpTransport(`${proxyUrl}?maxConnections=1&maxMessages=50`);
    try {
      for (let i = 0; i < 150; i++) await transport.send(email(i));
    } finally {
      transport.close();
    }
    expect(smtp.messages).toHaveLength(150);
    expect(connections).toHaveLength(3);
  });

  it('writes an email’s envelope in one write, and its message and final dot in at most two more', async () => {
    const transport = smtpTransport(`${proxyUrl}?maxConnections=1`);
    try {
      for (let i = 0; i < 5; i++) await transport.send(email(i));
    } finally {
      transport.close();
    }
    const writes = connections[0] ?? [];
    const envelopes = writes.filter((w) => w.startsWith('MAIL FROM:'));
    expect(envelopes).toHaveLength(5);
    // MAIL FROM, RCPT TO and DATA pipelined: one write, no round trip between them.
    for (const envelope of envelopes)
      expect(envelope).toMatch(/^MAIL FROM:<[^>]+>.*\r\nRCPT TO:<[^>]+>\r\nDATA\r\n$/s);
    // After the first envelope, each email's writes up to the next envelope: the message, its final dot.
    const starts = writes.flatMap((w, i) => (w.startsWith('MAIL FROM:') ? [i] : []));
    for (const [n, start] of starts.entries()) {
      const end = starts[n + 1] ?? writes.findIndex((w, i) => i > start && w.startsWith('QUIT'));
      const message = writes.slice(start + 1, end < 0 ? undefined : end);
      expect(message.length, message.join('|')).toBeLessThanOrEqual(2);
      expect(message.join('')).toMatch(/\r\n\.\r\n$/);
    }
  });
});
