// The first phase of a crash run: the compiled service, the suite's own PostgreSQL, the stand-ins (S/4HANA, SMTP,
// the portal), a publisher and a queue of the run's own, the drawn faults, and the fleet attached to the queue.
import { join } from 'node:path';
import pg from 'pg';
import { startPortalServer } from '../../sandbox/portalServer.js';
import { S4_SOURCE } from '../../sandbox/s4Events.js';
import { startS4Server } from '../../sandbox/s4Server.js';
import { startSmtpServer } from '../../sandbox/smtpServer.js';
import { createPublisher, createTestQueue } from '../support/broker.js';
import { serviceEnv } from '../support/serviceEnv.js';
import { recordClaims } from './claimLog.js';
import { compileService } from './compileService.js';
import { createPortalFaults, createS4Faults, createSmtpFaults } from './faults.js';
import { createFleet } from './fleet.js';
import { startPostgresInstance } from './postgresInstance.js';
import { createS4Clock, setBaselineDocuments } from './reconcileLoad.js';
import { SUITE_APPLICATION } from './sessionTerminator.js';

export interface RigOptions {
  seed: number;
  instances: number;
  source?: string;
  progress: (line: string) => void;
}

/** The parts are pushed to `cleanup` as they start: stopping them is the caller's last phase, whatever failed. */
export async function startRig(options: RigOptions, runDir: string, cleanup: Array<() => Promise<unknown>>) {
  options.progress(`building the service and starting PostgreSQL, S/4HANA and SMTP stand-ins (${runDir})`);
  // Every part that started is cleaned up at the end, also when another part failed to start.
  const owned = <T>(part: Promise<T>, stop: (value: T) => Promise<unknown>): Promise<T> =>
    part.then((value) => {
      cleanup.push(() => stop(value));
      return value;
    });
  const parts = await Promise.allSettled([
    compileService(join(runDir, 'build'), options.source),
    owned(startPostgresInstance(), (server) => server.stop()),
    owned(startS4Server(), (server) => server.close()),
    owned(startSmtpServer(), (server) => server.close()),
    owned(startPortalServer(), (server) => server.close()),
    owned(createPublisher(), (client) => client.close()),
    // A quorum queue with a delivery limit, like Event Mesh's max redelivery count in production: a broker
    // that counts redeliveries turns a hot release loop into valid events in the dead-letter queue, where
    // the checks see it (a classic queue would loop silently). The limit sits above MAX_DELIVERIES (10), so
    // the service's own count decides first, with room for deliveries returned by killed instances.
    owned(createTestQueue('fon-crash', { 'x-queue-type': 'quorum', 'x-delivery-limit': 20 }), (queue) =>
      queue.delete(),
    ),
  ]);
  const value = <T>(part: PromiseSettledResult<T>): T => {
    if (part.status === 'rejected') throw part.reason;
    return part.value;
  };
  const [mainJs, postgres, s4, smtp, portal, publisher, queue] = [
    value(parts[0]),
    value(parts[1]),
    value(parts[2]),
    value(parts[3]),
    value(parts[4]),
    value(parts[5]),
    value(parts[6]),
  ] as const;
  const pool = new pg.Pool({ connectionString: postgres.url, max: 2, application_name: SUITE_APPLICATION });
  // The suite restarts this server on purpose: idle connections failing then is expected.
  pool.on('error', () => {});
  cleanup.unshift(() => pool.end());

  const s4Faults = createS4Faults(options.seed, { unavailable: 0.12, hang: 0.03 });
  const smtpFaults = createSmtpFaults(options.seed, 0.15);
  s4.setFault(s4Faults.orders.fn);
  s4.returns.setFault(s4Faults.returns.fn);
  // Lets a database failover strike just as an email was accepted, before its sender records it as sent.
  const acceptanceWaiters: Array<() => void> = [];
  smtp.setRefuse((mail) => {
    const decision = smtpFaults.fn(mail);
    if (decision === 'accept') for (const resolve of acceptanceWaiters.splice(0)) resolve();
    return decision;
  });
  const nextMailAcceptance = () => new Promise<void>((resolve) => acceptanceWaiters.push(resolve));
  const portalFaults = createPortalFaults(options.seed, { unavailable: 0.1, hang: 0.03 });
  portal.setFault(portalFaults.fn);
  // Before any instance runs, so that the first run of each family, its baseline, finds them.
  const s4Clock = createS4Clock();
  const baseline = setBaselineDocuments(s4, s4Clock);

  const endpoints = serviceEnv({
    databaseUrl: postgres.url,
    s4Url: s4.url,
    smtpUrl: smtp.url,
    queueAddress: queue.address,
  });
  const fleet = createFleet({
    mainJs,
    logDir: runDir,
    count: options.instances,
    // One instance reads S/4HANA over OData V4, the others over V2: both paths meet the same faults.
    slotEnv: { i2: { S4_API: 'v4' } },
    env: {
      ...endpoints,
      // Every state is pushed to the portal stand-in too; a push claimed by a killed instance goes again
      // after this lease, with the same Idempotency-Key.
      destinations: JSON.stringify([
        ...(JSON.parse(endpoints.destinations ?? '[]') as unknown[]),
        { name: 'PORTAL', url: portal.url },
      ]),
      PORTAL_DESTINATION: 'PORTAL',
      PORTAL_TIMEOUT_MS: '1000',
      PORTAL_LEASE_SECONDS: '5',
      DATABASE_POOL_SIZE: '8',
      S4_TIMEOUT_MS: '1000',
      // A mail claimed by a killed instance waits this long before another instance sends it.
      MAIL_LEASE_SECONDS: '15',
      // Passes every few seconds (they find nothing expired), so that a failover can meet one.
      RETENTION_INTERVAL_SECONDS: '2',
      LOG_LEVEL: 'debug',
      // Reconciliation against the stand-in, often and in small pages, so that runs span pages and kills
      // land on them; the short settle time lets a run see a change taken on a second before it.
      S4_SOURCE,
      RECONCILE_INTERVAL: '5s',
      RECONCILE_OVERLAP: '10s',
      RECONCILE_SETTLE: '1s',
      RECONCILE_PAGE_SIZE: '5',
    },
  });
  cleanup.unshift(() => fleet.close());
  await fleet.start();
  await recordClaims(pool);
  options.progress(`${options.instances} instances attached to ${queue.name}`);
  return {
    postgres,
    s4,
    smtp,
    portal,
    publisher,
    queue,
    pool,
    fleet,
    s4Faults,
    smtpFaults,
    portalFaults,
    nextMailAcceptance,
    s4Clock,
    baseline,
  };
}

export type Rig = Awaited<ReturnType<typeof startRig>>;
