// Advanced Event Mesh speaks AMQP 1.0 over TLS only (amqps, 5671), with SASL PLAIN or SASL EXTERNAL (a client
// certificate). The local RabbitMQ's TLS listener stands in for it (scripts/ensure-rabbitmq-tls.sh): the service
// runs as its own process, trusting the broker's private CA through NODE_EXTRA_CA_CERTS as a user would.

import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { BROKER_TLS_PORT, brokerTls } from '../support/brokerTls.js';
import { orderMaker } from '../support/orders.js';
import { serviceEnv } from '../support/serviceEnv.js';
import { type ServiceProcess, spawnServiceProcess } from '../support/serviceProcess.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const tls = brokerTls();
const world = useWorld();
let queue: TestQueue;
const started: ServiceProcess[] = [];

beforeAll(async () => {
  queue = await createTestQueue('fon-aem');
});
afterAll(async () => {
  for (const service of started) if (service.alive()) service.child.kill('SIGKILL');
  await queue?.delete();
});

const { newOrder } = orderMaker(() => world.s4, 7_800_000);

function start(env: Record<string, string>): ServiceProcess {
  const service = spawnServiceProcess({
    ...serviceEnv({
      ...world.endpoints(),
      queueAddress: queue.address,
    }),
    AMQP_URL: `amqps://guest:guest@localhost:${BROKER_TLS_PORT}`,
    NODE_EXTRA_CA_CERTS: tls.caPath,
    ...env,
  });
  started.push(service);
  onTestFailed(() => console.error(`--- service log ---\n${service.log.slice(-30).join('\n')}`));
  return service;
}

async function consumes(service: ServiceProcess, count: number): Promise<void> {
  await service.ready;
  const orders = Array.from({ length: count }, () => newOrder({ overallDeliveryStatus: 'C' }));
  const ids = orders.map((salesOrder) => `aem-${salesOrder}`);
  await world.publisher.send(
    queue.address,
    orders.map((salesOrder, i) => ({ body: salesOrderEvent({ salesOrder, id: ids[i] }) })),
  );
  await eventually(`${count} events applied`, async () => {
    const { rows } = await world.db.pool.query<{ n: number }>(
      `select count(*)::int as n from processed_event
        where source = $1::text and id = any($2::text[]) and outcome = 'applied'`,
      [S4_SOURCE, ids],
    );
    return rows[0]?.n === count;
  });
}

async function stop(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGTERM');
  const [code] = (await service.exited) as [number | null];
  expect(code).toBe(0);
}

/** Waits for the logged connection error, then checks the process is up, started, and not ready. */
async function failsToConnect(service: ServiceProcess, reason: RegExp): Promise<void> {
  const entries = () =>
    service.log.flatMap((line) => {
      try {
        return [JSON.parse(line) as { msg: string; reason?: string; url?: string }];
      } catch {
        return [];
      }
    });
  // Two failed attempts: it keeps retrying rather than giving up or exiting.
  const failures = await eventually('two logged connection failures', async () => {
    if (!service.alive()) throw new Error(`exited: ${service.log.slice(-5).join('\n')}`);
    const found = entries().filter((entry) => entry.msg === 'AMQP error; reconnecting');
    return found.length >= 2 ? found : undefined;
  });
  for (const failure of failures) expect(failure.reason).toMatch(reason);
  const url = entries().find((entry) => entry.msg === 'fleet order notifier started')?.url;
  expect(url).toBeDefined();
  const health = (await (await fetch(`${url}/health`)).json()) as {
    ready: boolean;
    checks: { amqp: string };
  };
  expect(health).toMatchObject({ ready: false, checks: { amqp: 'detached' } });
  expect(service.alive()).toBe(true);
  await stop(service);
}

describe('AMQP over TLS, as Advanced Event Mesh offers it', () => {
  it('consumes events over amqps with SASL PLAIN, trusting the broker CA given in NODE_EXTRA_CA_CERTS', async () => {
    const service = start({});
    await consumes(service, 5);
    await stop(service);
  }, 90_000);

  it('consumes events with SASL EXTERNAL when AMQP_CLIENT_CERT and AMQP_CLIENT_KEY are set', async () => {
    const service = start({
      // A user and password the broker does not know: only SASL EXTERNAL, identity from the certificate's
      // common name (a RabbitMQ user of its own), gets this service connected.
      AMQP_URL: `amqps://no-such-user:wrong@localhost:${BROKER_TLS_PORT}`,
      AMQP_CLIENT_CERT: tls.clientCert,
      AMQP_CLIENT_KEY: tls.clientKey,
    });
    await consumes(service, 5);
    await stop(service);
  }, 90_000);

  it('stays up, not ready and retrying, with a logged reason, when the password is wrong', async () => {
    const service = start({ AMQP_URL: `amqps://guest:wrong@localhost:${BROKER_TLS_PORT}` });
    await failsToConnect(service, /refused the credentials/);
  }, 90_000);

  it("stays up, not ready and retrying, with a logged reason, when the broker's certificate is not trusted", async () => {
    const service = start({ NODE_EXTRA_CA_CERTS: '' });
    await failsToConnect(service, /TLS certificate is not trusted \(SELF_SIGNED_CERT_IN_CHAIN\)/);
  }, 90_000);
});
