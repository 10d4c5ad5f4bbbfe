// What a handled message tells its trace span, the log and the metrics: the CloudEvents semantic conventions,
// its family's key (a sales order, a customer return), the channel, and the outcome with its reason. observed() wraps the flow with all of it.
import type { Logger } from 'pino';
import { type Context, inSpan, producerContext, SpanKind } from '../telemetry/tracing.js';
import { type EventKeys, keysNamed } from './family.js';
import type { Channel, HandleContext, Handled, HandleEvent, Outcome } from './outcome.js';
import type { InboundMessage, ParsedEvent } from './parsedEvent.js';

export interface Observers {
  logger: Logger;
  /** The families, for what logs and traces call an event's key. */
  families: readonly EventKeys[];
  /** Sees every handled message with its channel and duration: metrics. Must not throw. */
  observe?: (channel: Channel, handled: Handled, seconds: number) => void;
}

/** Runs `work` in the message's span, once the flow knows its event (undefined when it did not parse). */
export type Traced = (
  event: ParsedEvent | undefined,
  work: (trace: Context) => Promise<Handled>,
) => Promise<Handled>;

type Flow = (message: InboundMessage, context: HandleContext, traced: Traced) => Promise<Handled>;

/**
 * The flow with its instrumentation: one span per delivery (continuing the producer's trace when the event
 * carries the tracing extension), its duration, one log line and the observer, all of the final outcome.
 */
export function observed(observers: Observers, flow: Flow): HandleEvent {
  return (message, context) => {
    const started = process.hrtime.bigint();
    const { channel } = context;
    return flow(message, context, (event, work) =>
      inSpan(
        'process event',
        { kind: SpanKind.CONSUMER },
        producerContext(event?.traceparent, event?.tracestate),
        async (span, trace) => {
          // Built only for a recorded span: with tracing off nothing is allocated per message.
          const recording = span.isRecording();
          if (recording) span.setAttributes(eventAttributes(channel, event, observers.families));
          const handled = await work(trace);
          if (recording) span.setAttributes(outcomeAttributes(handled.outcome));
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          const fields = { channel, ...identityFields(event, observers.families) };
          logOutcome(observers.logger, fields, handled.outcome, seconds);
          observers.observe?.(channel, handled, seconds);
          return handled;
        },
      ),
    );
  };
}

/** The outcome as logs and metrics name it: the accepted result, `released` or `rejected`. */
export function outcomeLabel(outcome: Outcome): string {
  return outcome.kind === 'accept' ? outcome.result : outcome.kind === 'release' ? 'released' : 'rejected';
}

/** The fields of every log line about an event once it parsed: its identity and its family's key. */
export function identityFields(event: ParsedEvent | undefined, families: readonly EventKeys[]) {
  if (event === undefined) return {};
  const { source, id, type, key } = event;
  const family = keysNamed(families, event.family);
  return family === undefined ? { source, id, type } : { source, id, type, [family.logKey]: key };
}

export function eventAttributes(
  channel: Channel,
  event: ParsedEvent | undefined,
  families: readonly EventKeys[],
) {
  return event === undefined
    ? { 'fon.channel': channel }
    : {
        'fon.channel': channel,
        'cloudevents.event_source': event.source,
        'cloudevents.event_id': event.id,
        'cloudevents.event_type': event.type,
        ...familyAttribute(event, families),
      };
}

/** The key as the event's family names it in traces (its spanKey). */
function familyAttribute(event: ParsedEvent, families: readonly EventKeys[]): Record<string, string> {
  const family = keysNamed(families, event.family);
  return family === undefined || event.key === undefined ? {} : { [family.spanKey]: event.key };
}

export function outcomeAttributes(outcome: Outcome) {
  if (outcome.kind === 'accept') return { 'fon.outcome': outcome.result };
  return {
    'fon.outcome': outcomeLabel(outcome),
    'fon.reason_code': outcome.code,
    'fon.reason': outcome.reason,
  };
}

/** One line per handled message, with the event's `fields`; a duplicate's is at debug, a no-op below it. */
export function logOutcome(log: Logger, fields: object, outcome: Outcome, seconds: number): void {
  if (outcome.kind === 'reject') log.error({ ...fields, reason: outcome.reason }, 'event rejected');
  else if (outcome.kind === 'release')
    log.warn({ ...fields, reason: outcome.reason }, 'event released for redelivery');
  else if (outcome.result === 'duplicate') log.debug(fields, 'duplicate event skipped');
  else if (outcome.result === 'already_refused')
    log.info(fields, 'message refused before arrived again; taken, its dead letter stands');
  else log.info({ ...fields, result: outcome.result, ms: Math.round(seconds * 1000) }, 'event processed');
}
