// The SMTP transport as it meets real relays (smtp-server). The sandbox relay, which pipelines, is seen through
// a loopback proxy that records what the client writes: how many connections carry a long run of emails, and how
// many socket writes one email takes. Relays of the tests' own show TLS from the first byte and by STARTTLS with
// a certificate the test processes trust, a logon the relay checks, a relay that does not pipeline, and one that
// hangs up on an idle connection.

import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
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
  it('keeps one connection for a long run of emails', async () => {
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

  it('writes an email’s envelope in one write, and its message and final dot in one more', async () => {
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
      expect(message.length, message.join('|')).toBe(1);
      expect(message.join('')).toMatch(/\r\n\.\r\n$/);
    }
  });

  it('writes each waiting email’s envelope behind the message before it: one write an email', async () => {
    const transport = smtpTransport(`${proxyUrl}?maxConnections=1`);
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => transport.send(email(i))));
    } finally {
      transport.close();
    }
    expect(smtp.messages.map((mail) => mail.subject).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `Sales order ${7_300_000 + i}`).sort(),
    );
    const writes = connections[0] ?? [];
    const first = writes.findIndex((w) => w.startsWith('MAIL FROM:'));
    const mailWrites = writes.slice(first).filter((w) => !w.startsWith('QUIT'));
    // The first envelope alone, then each message with its end mark and the next envelope, then the last message.
    expect(mailWrites).toHaveLength(21);
    expect(
      mailWrites.filter((w) => /\r\n\.\r\nMAIL FROM:<[^>]+>\r\nRCPT TO:<[^>]+>\r\nDATA\r\n$/.test(w)),
    ).toHaveLength(19);
  });

  it('sends a line that starts with a dot as it was written, however SMTP marks the message’s end', async () => {
    const transport = smtpTransport(proxyUrl);
    try {
      await transport.send({ ...email(1), text: '.\n..\n.hidden line\nend\n' });
    } finally {
      transport.close();
    }
    expect(smtp.messages[0]?.text).toBe('.\n..\n.hidden line\nend\n');
  });

  it('refuses an SMTP_URL parameter it does not know, naming the known ones', () => {
    expect(() => smtpTransport(`${proxyUrl}?maxConection=2`)).toThrow(
      /unknown parameter "maxConection"; known are maxConnections, maxMessages/,
    );
  });
});

/** A relay of the test's own: the messages it took, as received, and the number of sessions it saw. */
async function relay(options: SMTPServerOptions, scheme = 'smtp') {
  const received: string[] = [];
  let sessions = 0;
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    ...options,
    onConnect: (_session, callback) => {
      sessions++;
      callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        callback(null);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `${scheme}://localhost:${port}`,
    received,
    sessions: () => sessions,
    /** Ends every open session from the relay's side, as a relay does to idle clients. */
    hangUp: () => {
      for (const connection of (server as unknown as { connections: Set<{ close(): void }> }).connections) {
        connection.close();
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The test certificate for localhost (test/support/globalSetup.tls.ts), trusted by the test processes. */
function trustedCertificate() {
  const cert = process.env.TEST_TLS_CERT;
  const key = process.env.TEST_TLS_KEY;
  if (!cert || !key)
    throw new Error('TEST_TLS_CERT/TEST_TLS_KEY unset: run with test/support/globalSetup.tls.ts');
  return { cert: readFileSync(cert), key: readFileSync(key) };
}

const credentials = { user: 'notifier', pass: 'relay pass/word' };
const checkLogon: SMTPServerOptions['onAuth'] = (auth, _session, callback) =>
  auth.username === credentials.user && auth.password === credentials.pass
    ? callback(null, { user: auth.username })
    : callback(new Error('5.7.8 Authentication credentials invalid'));
const withLogon = (url: string, pass = credentials.pass) =>
  url.replace('://', `://${credentials.user}:${encodeURIComponent(pass)}@`);

describe('the SMTP transport and the relay’s security', () => {
  it('sends over TLS from the first byte (smtps) and logs on with SMTP_URL’s user and password', async () => {
    const server = await relay(
      { secure: true, ...trustedCertificate(), authOptional: false, onAuth: checkLogon },
      'smtps',
    );
    const transport = smtpTransport(withLogon(server.url));
    try {
      await transport.send(email(1));
      expect(server.received).toHaveLength(1);
      expect(server.received[0]).toContain('Subject: Sales order 7300001');
    } finally {
      transport.close();
      await server.close();
    }
  });

  it('upgrades with STARTTLS before it logs on, and refuses to send in clear text when TLS is required but not offered', async () => {
    const tls = await relay({ ...trustedCertificate(), authOptional: false, onAuth: checkLogon });
    const clear = await relay({ disabledCommands: ['STARTTLS'] });
    const upgraded = smtpTransport(withLogon(tls.url));
    const required = smtpTransport(`${clear.url}?requireTLS=true`);
    try {
      await upgraded.send(email(2));
      expect(tls.received).toHaveLength(1);
      await expect(required.send(email(3))).rejects.toMatchObject({ name: 'TransientError', code: 'ETLS' });
      expect(clear.received).toEqual([]);
    } finally {
      upgraded.close();
      required.close();
      await Promise.all([tls.close(), clear.close()]);
    }
  });

  it('fails a send for now, never for good, when the relay refuses the logon', async () => {
    const server = await relay(
      { secure: true, ...trustedCertificate(), authOptional: false, onAuth: checkLogon },
      'smtps',
    );
    const transport = smtpTransport(withLogon(server.url, 'wrong'));
    try {
      await expect(transport.send(email(4))).rejects.toMatchObject({
        name: 'TransientError',
        code: 'EAUTH',
        responseCode: 535,
      });
      expect(server.received).toEqual([]);
    } finally {
      transport.close();
      await server.close();
    }
  });
});

describe('the SMTP transport and a relay’s ways', () => {
  it('sends command by command to a relay that does not pipeline', async () => {
    const server = await relay({ hidePIPELINING: true, disabledCommands: ['STARTTLS'] });
    const transport = smtpTransport(server.url);
    try {
      await Promise.all(Array.from({ length: 6 }, (_, i) => transport.send(email(i))));
      expect(server.received).toHaveLength(6);
    } finally {
      transport.close();
      await server.close();
    }
  });

  it('command by command, sends to the recipients a relay takes and fails an email whose every recipient it refuses', async () => {
    const refuse: SMTPServerOptions['onRcptTo'] = (address, _session, callback) =>
      address.address.startsWith('gone')
        ? callback(Object.assign(new Error('5.1.1 Recipient address rejected'), { responseCode: 550 }))
        : callback();
    const server = await relay({ hidePIPELINING: true, disabledCommands: ['STARTTLS'], onRcptTo: refuse });
    const transport = smtpTransport(server.url);
    try {
      const partial = await transport.send({ ...email(7), to: ['kept@fleet.example', 'gone@fleet.example'] });
      expect(partial.refused).toEqual([
        expect.objectContaining({ code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }),
      ]);
      await expect(transport.send({ ...email(8), to: ['gone@fleet.example'] })).rejects.toMatchObject({
        name: 'PermanentError',
        code: 'EENVELOPE',
        responseCode: 550,
        rejected: ['gone@fleet.example'],
      });
      // The relay still takes the next email on the same session: the refused envelope was reset.
      await transport.send(email(9));
      expect(server.received).toHaveLength(2);
      expect(server.sessions()).toBe(1);
    } finally {
      transport.close();
      await server.close();
    }
  });

  it('sends on a new connection, without failing the email, when the relay hung up on the idle one', async () => {
    const server = await relay({ disabledCommands: ['STARTTLS'] });
    const transport = smtpTransport(`${server.url}?maxConnections=1`);
    try {
      await transport.send(email(5));
      server.hangUp();
      await transport.send(email(6));
      expect(server.received).toHaveLength(2);
      expect(server.sessions()).toBe(2);
    } finally {
      transport.close();
      await server.close();
    }
  });
});
