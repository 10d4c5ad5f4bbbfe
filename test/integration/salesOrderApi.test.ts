// The S/4HANA read against real HTTP servers: the OData stand-in, and a bare server for what it cannot show.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import { classify, PermanentError, TransientError } from '../../src/errors.js';
import { createSalesOrderApi } from '../../src/families/salesOrder/api.js';
import { registerDestination } from '../support/destination.js';
import { doesNotHang } from '../support/waits.js';

let s4: S4Server;
let api: ReturnType<typeof createSalesOrderApi>;

beforeAll(async () => {
  s4 = await startS4Server();
  api = createSalesOrderApi({ destination: registerDestination(s4.url), timeoutMs: 300 });
});
afterAll(async () => {
  await s4.close();
});

async function failure(
  promise: Promise<unknown>,
): Promise<Error & { code?: string; status?: number; cause?: unknown }> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the read to fail');
}

describe('reading A_SalesOrder', () => {
  it('maps the current order from the OData V2 answer', async () => {
    s4.setOrder({
      salesOrder: '1000473',
      lastChangeDateTime: '2026-11-30T10:00:00Z',
      requestedDeliveryDate: '2026-12-15',
      overallDeliveryStatus: 'B',
      customerReference: 'PO 1',
    });
    expect(await api.read('1000473')).toMatchObject({
      salesOrder: '1000473',
      requestedDeliveryDate: '2026-12-15',
      changedAt: new Date('2026-11-30T10:00:00Z'),
      deliveryStatus: 'B',
      customerReference: 'PO 1',
    });
  });

  it('answers null for an order S/4HANA does not know', async () => {
    expect(await api.read('4040404')).toBeNull();
  });

  it('doubles quotes in the key and URL-encodes it', async () => {
    s4.setOrder({ salesOrder: "A'B", lastChangeDateTime: '2026-11-30T10:00:00Z' });
    expect((await api.read("A'B"))?.salesOrder).toBe("A'B");
  });

  it('reports 503 and 429 with their status, classified transient', async () => {
    s4.setOrder({ salesOrder: '5030001', lastChangeDateTime: '2026-11-30T10:00:00Z' });
    for (const [fault, status] of [
      ['unavailable', 503],
      ['tooMany', 429],
    ] as const) {
      s4.setFault(() => fault);
      const err = await failure(api.read('5030001'));
      expect(err.status).toBe(status);
      expect(classify(err)).toBe('transient');
    }
    s4.setFault(undefined);
  });

  it('gives up on a hanging S/4HANA after the timeout, classified transient', async () => {
    s4.setOrder({ salesOrder: '5040001', lastChangeDateTime: '2026-11-30T10:00:00Z' });
    s4.setFault(() => 'hang');
    const started = Date.now();
    const err = await doesNotHang('the read to give up', failure(api.read('5040001')));
    s4.setFault(undefined);
    // The client's own timeout (300 ms here) ended the read: not earlier, and not some other failure.
    expect((err.cause as { code?: string }).code).toBe('ECONNABORTED');
    expect(Date.now() - started).toBeGreaterThanOrEqual(295);
    expect(classify(err)).toBe('transient');
  });
});

describe('the destination', () => {
  let server: Server;
  let seen: IncomingHttpHeaders[];
  let answer: number;

  beforeAll(async () => {
    seen = [];
    server = createServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(answer, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ d: { SalesOrder: '1', LastChangeDateTime: '/Date(0+0000)/' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("sends the destination's credentials, and resolves it again after S/4HANA refused them", async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const name = 'S4_ROTATING';
    const setPassword = (password: string) => {
      const others = (JSON.parse(process.env.destinations ?? '[]') as Array<{ name: string }>).filter(
        (destination) => destination.name !== name,
      );
      process.env.destinations = JSON.stringify([...others, { name, url, username: 'tech', password }]);
    };
    setPassword('old');
    const rotating = createSalesOrderApi({ destination: name, timeoutMs: 1000 });
    const basic = (password: string) => `Basic ${Buffer.from(`tech:${password}`).toString('base64')}`;

    answer = 200;
    await rotating.read('1');
    setPassword('new'); // rotated in the destination; the service still holds the old one
    answer = 401;
    const refused = await failure(rotating.read('1'));
    expect(refused.status).toBe(401);
    answer = 200;
    await rotating.read('1');

    expect(seen.map((headers) => headers.authorization)).toEqual([basic('old'), basic('old'), basic('new')]);
  });
});

describe('failures the client states itself', () => {
  let server: Server;
  let reply: (response: ServerResponse) => void;
  let url: string;

  beforeAll(async () => {
    server = createServer((_request, response) => reply(response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('states a redirect transient, and it stays transient with its status attached for logs', async () => {
    reply = (response) => {
      response.writeHead(302, { location: '/sap/bc/ui5_ui5/logon' });
      response.end();
    };
    const client = createSalesOrderApi({ destination: registerDestination(url), timeoutMs: 1000 });
    const err = await failure(client.read('1'));
    expect(err).toBeInstanceOf(TransientError);
    expect(err.message).toMatch(/redirected \(HTTP 302\)/);
    expect(err.status).toBe(302);
    // Fields a logging change might add must not move the kind: it is stated, not inferred.
    Object.assign(err, { response: { status: 302 }, statusCode: 302, code: 'ERR_FR_REDIRECTION' });
    expect(classify(err)).toBe('transient');
  });

  it('states a 2xx answer that is not JSON transient, with the parse error as cause', async () => {
    reply = (response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>logon</html>');
    };
    const client = createSalesOrderApi({ destination: registerDestination(url), timeoutMs: 1000 });
    for (const read of [() => client.read('1'), () => client.readMany(['1', '2'])]) {
      const err = await failure(read());
      expect(err).toBeInstanceOf(TransientError);
      expect(err.cause).toBeInstanceOf(SyntaxError);
      Object.assign(err, { status: 400 });
      expect(classify(err)).toBe('transient');
    }
  });

  it('states other 4xx answers permanent and 5xx transient, with the status and the OData message', async () => {
    let status = 400;
    reply = (response) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 'X', message: { lang: 'en', value: 'Invalid key' } } }));
    };
    const client = createSalesOrderApi({ destination: registerDestination(url), timeoutMs: 1000 });
    const refused = await failure(client.read('1'));
    expect(refused).toBeInstanceOf(PermanentError);
    expect(refused.message).toBe('S/4HANA answered HTTP 400: Invalid key');
    status = 502;
    expect(await failure(client.read('1'))).toBeInstanceOf(TransientError);
  });

  it('states a socket failure transient, the socket error kept as cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const client = createSalesOrderApi({
      destination: registerDestination(`http://127.0.0.1:${port}`),
      timeoutMs: 1000,
    });
    const err = await failure(client.read('1'));
    expect(err).toBeInstanceOf(TransientError);
    expect((err.cause as { code?: string }).code).toBe('ECONNREFUSED');
  });
});
