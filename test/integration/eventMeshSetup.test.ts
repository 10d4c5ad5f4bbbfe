import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureEventMeshQueue } from '../../src/messaging/eventMeshSetup.js';
import { doesNotHang } from '../support/waits.js';

// A local stand-in for the XSUAA token endpoint and the Event Mesh management API: it keeps queues and
// subscriptions in memory, answers PUT with 201 (created) or 200 (updated) like the real API, and records
// every request so the tests can check what the service sent.

const CLIENT_ID = 'sb-default-fon!b1|xbem-service-broker!b2';
const CLIENT_SECRET = 'not-a-real-secret-7f3a';
const TOKEN = 'token-for-management';
const QUEUES = '/hub/rest/api/v1/management/messaging/queues/';

interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let baseUrl: string;
let requests: Recorded[] = [];
let queues = new Map<string, Record<string, unknown>>();
let subscriptions = new Map<string, Set<string>>();

type Reply = { status: number; body: unknown } | 'no answer';
/** Lets a test replace the answer to a request; undefined falls through to the emulation. */
let override: ((req: Recorded) => Reply | undefined) | undefined;

const json = (status: number, body: unknown = {}): Reply => ({ status, body });

function reply(req: Recorded): Reply {
  const overridden = override?.(req);
  if (overridden !== undefined) return overridden;
  if (req.path === '/oauth/token') {
    const expected = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
    if (req.method !== 'POST' || req.headers.authorization !== expected) return json(401);
    return json(200, { access_token: TOKEN, token_type: 'bearer', expires_in: 43199 });
  }
  if (req.headers.authorization !== `Bearer ${TOKEN}`) return json(401, { message: 'no token' });
  if (req.method !== 'PUT' || !req.path.startsWith(QUEUES)) return json(404);
  const [queuePart, kind, topicPart, ...rest] = req.path.slice(QUEUES.length).split('/');
  const queue = decodeURIComponent(queuePart ?? '');
  if (kind === undefined) {
    const existed = queues.has(queue);
    queues.set(queue, req.body === '' ? {} : JSON.parse(req.body));
    return json(existed ? 200 : 201, { name: queue });
  }
  if (kind !== 'subscriptions' || topicPart === undefined || rest.length > 0) return json(404);
  if (!queues.has(queue)) return json(404, { message: 'queue not found' });
  const topic = decodeURIComponent(topicPart);
  const topics = subscriptions.get(queue) ?? new Set<string>();
  const existed = topics.has(topic);
  subscriptions.set(queue, topics.add(topic));
  return json(existed ? 200 : 201, { queueName: queue, topicPattern: topic });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const answer = reply(recorded);
      if (answer === 'no answer') return;
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  requests = [];
  queues = new Map();
  subscriptions = new Map();
  override = undefined;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const TOPICS = [
  'sap/S4HANAOD/+/ce/sap/s4/beh/salesorder/v1/SalesOrder/Changed/v1',
  'sap/S4HANAOD/+/ce/sap/s4/beh/salesorder/v1/SalesOrder/Created/v1',
];

const options = (overrides: { timeoutMs?: number } = {}) => ({
  // A trailing slash on the binding's uri must not double the slash in the path.
  management: {
    uri: `${baseUrl}/`,
    oa2: { clientid: CLIENT_ID, clientsecret: CLIENT_SECRET, tokenendpoint: `${baseUrl}/oauth/token` },
  },
  queue: 'queue:fleet/fon/orders/salesorder',
  deadMessageQueue: 'fleet/fon/orders/salesorder.dmq',
  topics: TOPICS,
  maxRedeliveryCount: 10,
  ...overrides,
});

const queuePath = (name: string) => `${QUEUES}${encodeURIComponent(name)}`;

/** The error a call rejects with; a call that succeeds fails the test. */
const failureOf = (promise: Promise<unknown>): Promise<Error> =>
  promise.then(
    () => {
      throw new Error('expected the setup to fail');
    },
    (err: unknown) => err as Error,
  );

describe('ensureEventMeshQueue', () => {
  it('gets a client-credentials token, then creates the dead message queue, the queue and its subscriptions', async () => {
    const result = await ensureEventMeshQueue(options());

    expect(result).toEqual({ queue: 'fleet/fon/orders/salesorder', subscriptions: TOPICS });
    const [token, ...calls] = requests;
    expect(token?.method).toBe('POST');
    expect(token?.path).toBe('/oauth/token');
    expect(token?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(token?.body).toBe('grant_type=client_credentials');

    // Queue names travel without the AMQP `queue:` prefix and with their slashes encoded.
    expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      `PUT ${queuePath('fleet/fon/orders/salesorder.dmq')}`,
      `PUT ${queuePath('fleet/fon/orders/salesorder')}`,
      ...TOPICS.map(
        (topic) =>
          `PUT ${queuePath('fleet/fon/orders/salesorder')}/subscriptions/${encodeURIComponent(topic)}`,
      ),
    ]);
    expect(calls[1]?.path).toContain('fleet%2Ffon%2Forders%2Fsalesorder');
    expect(calls.every((call) => call.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);

    expect(queues.get('fleet/fon/orders/salesorder.dmq')).toEqual({});
    expect(queues.get('fleet/fon/orders/salesorder')).toEqual({
      accessType: 'NON_EXCLUSIVE',
      deadMsgQueue: 'fleet/fon/orders/salesorder.dmq',
      maxRedeliveryCount: 10,
    });
    expect(calls[1]?.headers['content-type']).toBe('application/json');
    expect([...(subscriptions.get('fleet/fon/orders/salesorder') ?? [])]).toEqual(TOPICS);
  });

  it('succeeds again on a second start and leaves the same queues and subscriptions', async () => {
    await ensureEventMeshQueue(options());
    const afterFirst = { queues: new Map(queues), subscriptions: structuredClone(subscriptions) };
    requests = [];

    const second = await ensureEventMeshQueue(options());

    expect(second.subscriptions).toEqual(TOPICS);
    expect(queues).toEqual(afterFirst.queues);
    expect(subscriptions).toEqual(afterFirst.subscriptions);
    expect(requests.filter((call) => call.method === 'PUT')).toHaveLength(2 + TOPICS.length);
  });

  it('treats 409 on a subscription as already subscribed', async () => {
    override = (req) =>
      req.path.includes('/subscriptions/')
        ? json(409, { message: 'subscription already exists' })
        : undefined;

    await expect(ensureEventMeshQueue(options())).resolves.toEqual({
      queue: 'fleet/fon/orders/salesorder',
      subscriptions: TOPICS,
    });
  });

  it('names the failed step and the HTTP status when the broker refuses a subscription', async () => {
    override = (req) =>
      req.path.includes('/subscriptions/')
        ? json(403, { message: 'topic not allowed by the service descriptor rules' })
        : undefined;

    const error = await failureOf(ensureEventMeshQueue(options()));

    expect(error).toBeInstanceOf(Error);
    expect(error.message).toContain(`subscribe the queue fleet/fon/orders/salesorder to ${TOPICS[0]}`);
    expect(error.message).toContain('HTTP 403');
    expect(error.message).toContain('not allowed by the service descriptor rules');
    expect(error.message).not.toContain(TOKEN);
  });

  it('reports a refused token request without the client secret, even if the endpoint echoes it', async () => {
    override = (req) =>
      req.path === '/oauth/token'
        ? json(401, { error: 'unauthorized', error_description: `Bad credentials: ${CLIENT_SECRET}` })
        : undefined;

    const error = await failureOf(ensureEventMeshQueue(options()));

    expect(error.message).toMatch(/failed to get a management token: HTTP 401/);
    expect(error.message).toContain('Bad credentials: ***');
    expect(error.message).not.toContain(CLIENT_SECRET);
    expect(requests.filter((call) => call.method === 'PUT')).toHaveLength(0);
  });

  it('gives up on a management call that does not answer within the timeout', async () => {
    override = (req) => (req.method === 'PUT' ? 'no answer' : undefined);

    const started = Date.now();
    const error = await doesNotHang(
      'the setup to give up',
      failureOf(ensureEventMeshQueue(options({ timeoutMs: 200 }))),
    );

    // The configured timeout ended the call: not earlier, and with the timeout as the reason.
    expect(Date.now() - started).toBeGreaterThanOrEqual(195);
    expect(error.message).toContain('create the dead message queue fleet/fon/orders/salesorder.dmq');
    expect(error.message).toContain('TimeoutError');
  });
});
