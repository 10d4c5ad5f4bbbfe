import type { Pool } from 'pg';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Channel, Handled } from './events/handleEvent.js';
import { oldestProcessedAgeSeconds } from './events/inbox.js';
import type { MailResult } from './notifications/mailSender.js';
import { outboxBacklog } from './notifications/outbox.js';
import { ordersByPortalStatus } from './portal/openOrders.js';
import type { PushResult } from './portal/portalSender.js';
import { pushBacklog } from './portal/pushOutbox.js';
import type { RequestResult } from './s4/batchedReads.js';

export type Metrics = ReturnType<typeof createMetrics>;

export interface MetricsSources {
  /** Whether the AMQP receiver is attached; absent when the service takes events by webhook only. */
  amqpAttached?: () => boolean;
}

/** Prometheus metrics. Gauges that describe stored state are read from the database at scrape time. */
export function createMetrics(pool: Pool, retentionDays: number, sources: MetricsSources = {}) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const events = new Counter({
    name: 'fon_events_total',
    help: 'Events handled, by outcome: applied, stale, not_found, ignored, duplicate, released, rejected',
    labelNames: ['channel', 'outcome', 'reason'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'fon_event_duration_seconds',
    help: 'Time from receiving an event to its outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const s4Duration = new Histogram({
    name: 'fon_s4_request_duration_seconds',
    help: 'S/4HANA requests, by result: ok, not_found, throttled, refused, error',
    labelNames: ['result'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const s4Requests = new Counter({
    name: 'fon_s4_requests_total',
    help: 'S/4HANA requests (not orders read), by result: ok, not_found, throttled, refused (a $filter answered 400), error',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const s4Keys = new Histogram({
    name: 'fon_s4_keys_per_request',
    help: 'Sales orders asked for in one S/4HANA request',
    buckets: [1, 2, 5, 10, 20, 30, 50, 100, 200],
    registers: [registry],
  });
  const s4Throttled = new Counter({
    name: 'fon_s4_throttled_seconds_total',
    help: 'Time all S/4HANA reads were paused on a 429 or 503 with Retry-After',
    registers: [registry],
  });
  const mails = new Counter({
    name: 'fon_mail_total',
    help: 'Emails handled by the outbox sender, by result: sent, retry, parked, resent (accepted by SMTP, but the sent mark failed, so it goes again)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const pushes = new Counter({
    name: 'fon_portal_push_total',
    help: "Pushes to the portal's API, by result: pushed (2xx), conflict (409/412: the portal holds a newer state), retry (transient failure), parked (refused, for an operator)",
    labelNames: ['result'] as const,
    registers: [registry],
  });
  // Every result from the start, so a rate over them is defined before the first push.
  for (const result of ['pushed', 'conflict', 'retry', 'parked'] as const) pushes.inc({ result }, 0);
  const reconnects = new Counter({
    name: 'fon_amqp_reconnects_total',
    help: 'AMQP connections lost and retried',
    registers: [registry],
  });
  const { amqpAttached } = sources;
  // Only where AMQP is configured: a webhook-only instance exporting 0 would look detached to every alert.
  if (amqpAttached !== undefined) {
    new Gauge({
      name: 'fon_amqp_attached',
      help: '1 while the AMQP receiver is attached to its queue, else 0',
      registers: [registry],
      collect() {
        this.set(amqpAttached() ? 1 : 0);
      },
    });
  }
  // Two gauges per outbox read the same figures: one query per outbox and scrape, shared by both.
  const mailBacklog = sharedWhileRunning(() => outboxBacklog(pool));
  const portalBacklog = sharedWhileRunning(() => pushBacklog(pool));
  new Gauge({
    name: 'fon_mail_outbox',
    help: 'Emails in the outbox by state; pending includes those waiting for a retry',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const { pending, parked } = await mailBacklog();
      this.set({ state: 'pending' }, pending);
      this.set({ state: 'parked' }, parked);
    },
  });
  new Gauge({
    name: 'fon_mail_outbox_oldest_pending_seconds',
    help: 'Age of the oldest email not yet sent (0 when none)',
    registers: [registry],
    async collect() {
      this.set((await mailBacklog()).oldestPendingSeconds);
    },
  });
  new Gauge({
    name: 'fon_portal_push_backlog',
    help: 'Orders whose state still waits to be pushed to the portal, by state; pending includes those waiting for a retry',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const { pending, parked } = await portalBacklog();
      this.set({ state: 'pending' }, pending);
      this.set({ state: 'parked' }, parked);
    },
  });
  new Gauge({
    name: 'fon_portal_push_oldest_pending_seconds',
    help: 'How long the order waiting longest for its portal push has waited (0 when none)',
    registers: [registry],
    async collect() {
      this.set((await portalBacklog()).oldestPendingSeconds);
    },
  });
  new Gauge({
    name: 'fon_portal_orders',
    help: 'Orders in portal_order_status, by portal status',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const { status, count } of await ordersByPortalStatus(pool)) this.set({ status }, count);
    },
  });
  new Gauge({
    name: 'fon_processed_event_oldest_age_seconds',
    help: 'Age of the oldest processed-event record; compare with fon_processed_event_retention_seconds',
    registers: [registry],
    async collect() {
      this.set(await oldestProcessedAgeSeconds(pool));
    },
  });
  new Gauge({
    name: 'fon_processed_event_retention_seconds',
    help: 'How long processed-event records are kept (DEDUP_RETENTION_DAYS)',
    registers: [registry],
  }).set(retentionDays * 86_400);

  return {
    registry,
    observeEvent(channel: Channel, handled: Handled, seconds: number): void {
      const { outcome } = handled;
      const name =
        outcome.kind === 'accept' ? outcome.result : outcome.kind === 'release' ? 'released' : 'rejected';
      const reason = outcome.kind === 'accept' ? '' : outcome.code;
      events.inc({ channel, outcome: name, reason });
      duration.observe({ outcome: name }, seconds);
    },
    observeS4({ result, keys, seconds }: { result: RequestResult; keys: number; seconds: number }): void {
      s4Requests.inc({ result });
      s4Duration.observe({ result }, seconds);
      s4Keys.observe(keys);
    },
    s4Paused(seconds: number): void {
      s4Throttled.inc(seconds);
    },
    mail(result: MailResult): void {
      mails.inc({ result });
    },
    portalPush(result: PushResult): void {
      pushes.inc({ result });
    },
    reconnect(): void {
      reconnects.inc();
    },
  };
}

/** Calls made while one is running share its promise: the gauges a scrape collects at once read once. */
function sharedWhileRunning<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    running ??= read().finally(() => {
      running = undefined;
    });
    return running;
  };
}
