// The service's Prometheus metrics, composed here: the shared path's counters and gauges, and each event family's
// own gauges (FamilyModule.gauges). Gauges that describe stored state are read from the database at scrape time.
import type { Pool } from 'pg';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { oldestProcessedAgeSeconds } from '../events/inbox.js';
import type { Channel, Handled } from '../events/outcome.js';
import { outcomeLabel } from '../events/outcomeReport.js';
import type { FamilyModule } from '../families/index.js';
import { outboxBacklog } from '../notifications/mailOutbox.js';
import type { MailResult } from '../notifications/mailSender.js';
import type { PushResult } from '../portal/portalSender.js';
import { pushBacklog } from '../portal/pushOutbox.js';
import type { RequestResult } from '../s4/batchedReads.js';
import { backlogGauges, scrapedGauge } from '../telemetry/scrapedGauges.js';

export type Metrics = ReturnType<typeof createMetrics>;

export interface MetricsSources {
  /** Whether the AMQP receiver is attached; absent when the service takes events by webhook only. */
  amqpAttached?: () => boolean;
  /** The AMQP consumer's credit window now; absent as amqpAttached is. */
  amqpCreditWindow?: () => number;
}

/** Prometheus metrics. Gauges that describe stored state are read from the database at scrape time. */
export function createMetrics(
  pool: Pool,
  families: readonly FamilyModule[],
  retentionDays: number,
  sources: MetricsSources = {},
) {
  const labels = new Map<string | undefined, string>(families.map((family) => [family.name, family.label]));
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const histogram = <L extends string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly L[] = [],
  ) => new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });

  const events = counter(
    'fon_events_total',
    `Events handled, by outcome: applied, stale, not_found, ignored, not_warranty_case, duplicate, already_refused (refused before, taken again), released, rejected; and by family: ${[...labels.values()].join(', ')}, none (other types, and messages that did not parse)`,
    ['channel', 'outcome', 'reason', 'family'],
  );
  const duration = histogram(
    'fon_event_duration_seconds',
    'Time from receiving an event to its outcome',
    [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ['outcome'],
  );
  const s4Duration = histogram(
    'fon_s4_request_duration_seconds',
    'S/4HANA requests, by result: ok, not_found, throttled, refused, error',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ['result'],
  );
  const s4Requests = counter(
    'fon_s4_requests_total',
    'S/4HANA requests (not documents read), by result: ok, not_found, throttled, refused (a $filter answered 400), error',
    ['result'],
  );
  const s4Keys = histogram(
    'fon_s4_keys_per_request',
    'Documents (sales orders, customer returns) asked for in one S/4HANA request',
    [1, 2, 5, 10, 20, 30, 50, 100, 200],
  );
  const s4Throttled = counter(
    'fon_s4_throttled_seconds_total',
    'Time all S/4HANA reads were paused on a 429 or 503 with Retry-After',
  );
  const mails = counter(
    'fon_mail_total',
    'Emails handled by the outbox sender, by result: sent, partial (the relay refused some recipients and took it for the others; not sent again), retry, parked, resent (accepted by SMTP, but the sent mark failed, so it goes again)',
    ['result'],
  );
  const pushes = counter(
    'fon_portal_push_total',
    "Pushes to the portal's API, by result: pushed (2xx), conflict (409/412: the portal holds a newer state), retry (transient failure), parked (refused, for an operator)",
    ['result'],
  );
  // Every result from the start, so a rate over them is defined before the first push.
  for (const result of ['pushed', 'conflict', 'retry', 'parked'] as const) pushes.inc({ result }, 0);
  const reconnects = counter('fon_amqp_reconnects_total', 'AMQP connections lost and retried');
  const { amqpAttached } = sources;
  // Only where AMQP is configured: a webhook-only instance exporting 0 would look detached to every alert.
  if (amqpAttached !== undefined) {
    scrapedGauge(
      registry,
      'fon_amqp_attached',
      '1 while the AMQP receiver is attached to its queue, else 0',
      () => (amqpAttached() ? 1 : 0),
    );
  }
  const { amqpCreditWindow } = sources;
  if (amqpCreditWindow !== undefined) {
    scrapedGauge(
      registry,
      'fon_amqp_credit_window',
      'Most unsettled AMQP messages the broker may send now: AMQP_PREFETCH, or the adaptive window',
      amqpCreditWindow,
    );
  }
  backlogGauges(registry, () => outboxBacklog(pool), {
    byState: ['fon_mail_outbox', 'Emails in the outbox by state; pending includes those waiting for a retry'],
    oldestPending: [
      'fon_mail_outbox_oldest_pending_seconds',
      'Age of the oldest email not yet sent (0 when none)',
    ],
  });
  backlogGauges(registry, () => pushBacklog(pool), {
    byState: [
      'fon_portal_push_backlog',
      'Documents (orders, warranty cases) whose state still waits to be pushed to the portal, by state; pending includes those waiting for a retry',
    ],
    oldestPending: [
      'fon_portal_push_oldest_pending_seconds',
      'How long the document waiting longest for its portal push has waited (0 when none)',
    ],
  });
  for (const family of families) family.gauges?.(registry, pool);
  scrapedGauge(
    registry,
    'fon_processed_event_oldest_age_seconds',
    'Age of the oldest processed-event record; compare with fon_processed_event_retention_seconds',
    () => oldestProcessedAgeSeconds(pool),
  );
  scrapedGauge(
    registry,
    'fon_processed_event_retention_seconds',
    'How long processed-event records are kept (DEDUP_RETENTION_DAYS)',
    () => retentionDays * 86_400,
  );

  return {
    registry,
    observeEvent(channel: Channel, handled: Handled, seconds: number): void {
      const { outcome } = handled;
      const name = outcomeLabel(outcome);
      const reason = outcome.kind === 'accept' ? '' : outcome.code;
      events.inc({
        channel,
        outcome: name,
        reason,
        family: labels.get(handled.event?.family) ?? 'none',
      });
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
