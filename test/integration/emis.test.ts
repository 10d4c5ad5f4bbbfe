// Event Mesh in SAP Integration Suite, end to end over local parts: the service finds the binding labelled
// event-mesh-message-client, fetches an OAuth2 token (by client secret, or over mTLS with X.509 binding
// credentials), opens AMQP 1.0 over WebSocket with it, and after the token expired and the socket dropped it
// comes back with a fresh token and loses nothing.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { Service } from '../../src/service/buildService.js';
import { createTestQueue, type TestQueue } from '../support/broker.js';
import { brokerTls } from '../support/brokerTls.js';
import { type EventMeshStub, startEventMeshStub } from '../support/eventMeshStub.js';
import { startTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
let queue: TestQueue;
let mesh: EventMeshStub | undefined;
let service: Service | undefined;

beforeAll(async () => {
  queue = await createTestQueue('fon-emis');
});
afterEach(async () => {
  await service?.stop();
  await mesh?.close();
  service = undefined;
  mesh = undefined;
});
afterAll(async () => {
  await queue?.delete();
});

const { newOrder } = orderMaker(() => world.s4, 7_900_000);

async function startWith(vcapServices: string): Promise<Service> {
  service = await startTestService({
    ...world.endpoints(),
    queueAddress: queue.address,
    // No AMQP_URL: the broker comes from the binding.
    env: { AMQP_URL: '', VCAP_SERVICES: vcapServices },
  });
  return service;
}

/** Publishes `count` events and returns their ids. */
async function publish(count: number): Promise<string[]> {
  const orders = Array.from({ length: count }, () => newOrder({ overallDeliveryStatus: 'C' }));
  const ids = orders.map((salesOrder) => `emis-${salesOrder}`);
  await world.publisher.send(
    queue.address,
    orders.map((salesOrder, i) => ({ body: salesOrderEvent({ salesOrder, id: ids[i] }) })),
  );
  return ids;
}

async function appliedOnce(ids: string[]): Promise<void> {
  await eventually(`${ids.length} events applied`, async () => {
    const { rows } = await world.db.pool.query<{ n: number }>(
      `select count(*)::int as n from processed_event
        where source = $1::text and id = any($2::text[]) and outcome = 'applied'`,
      [S4_SOURCE, ids],
    );
    return rows[0]?.n === ids.length;
  });
  await eventually('the queue settled', () => queue.isIdle());
}

describe('Event Mesh in Integration Suite over AMQP 1.0 WebSocket', () => {
  it('consumes with a token fetched by client secret, and after the token expired and the socket dropped reconnects with a fresh token, losing nothing', async () => {
    mesh = await startEventMeshStub();
    const running = await startWith(mesh.vcapServices({ clientsecret: mesh.clientSecret }));
    const first = await publish(10);
    await appliedOnce(first);
    expect(mesh.accepted).toEqual([mesh.issued[0]]);

    mesh.expireTokens();
    mesh.dropConnections();
    const second = await publish(10);
    await eventually('the receiver attached again', async () => running.amqp?.isAttached());
    await appliedOnce([...first, ...second]);

    // The upgrade after the drop carried a token fetched after the expiry, not the expired one.
    expect(mesh.issued.length).toBeGreaterThanOrEqual(2);
    expect(mesh.accepted.at(-1)).toBe(mesh.issued.at(-1));
    expect(mesh.accepted.at(-1)).not.toBe(mesh.issued[0]);
    expect(mesh.refused).toBe(0);
    const { rows } = await world.db.pool.query<{ n: number }>(
      'select count(*)::int as n from processed_event where id = any($1::text[])',
      [[...first, ...second]],
    );
    expect(rows[0]?.n).toBe(20);
  }, 60_000);

  it('fetches the token over mTLS with the X.509 binding credentials and consumes', async () => {
    const tls = brokerTls();
    mesh = await startEventMeshStub({ ca: readFileSync(tls.caPath, 'utf8') });
    await startWith(mesh.vcapServices({ certificate: tls.clientCert, key: tls.clientKey }));
    await appliedOnce(await publish(5));
    expect(mesh.issued).toHaveLength(1);
    expect(mesh.accepted).toEqual(mesh.issued);
  }, 60_000);

  it('stays up, not attached and retrying when the mTLS token endpoint refuses a client without its certificate', async () => {
    const tls = brokerTls();
    mesh = await startEventMeshStub({ ca: readFileSync(tls.caPath, 'utf8') });
    const running = await startTestService({
      ...world.endpoints(),
      queueAddress: queue.address,
      waitForAttach: false,
      env: { AMQP_URL: '', VCAP_SERVICES: mesh.vcapServices({ clientsecret: 'not-the-certificate' }) },
    });
    service = running;
    // The client tries the secret in the header, then in the body: two refusals make one failed connect; two
    // failed connects show it keeps retrying.
    const stub = mesh;
    await eventually('two connects refused at the token endpoint', async () => stub.tokenRefusals >= 4);
    expect(mesh.issued).toEqual([]);
    expect(mesh.accepted).toEqual([]);
    expect(running.amqp?.isAttached()).toBe(false);
  }, 60_000);
});
