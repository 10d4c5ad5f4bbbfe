// What a handled message tells its trace span and the log: the CloudEvents semantic conventions, the sales
// order, the channel, and the outcome with its reason.
import type { Logger } from 'pino';
import type { ParsedEvent } from './cloudEvent.js';
import type { Channel, Outcome } from './outcome.js';

export function eventAttributes(channel: Channel, event: ParsedEvent | undefined) {
  return event === undefined
    ? { 'fon.channel': channel }
    : {
        'fon.channel': channel,
        'cloudevents.event_source': event.source,
        'cloudevents.event_id': event.id,
        'cloudevents.event_type': event.type,
        ...(event.salesOrder === undefined ? {} : { 'sap.sales_order': event.salesOrder }),
      };
}

export function outcomeAttributes(outcome: Outcome) {
  if (outcome.kind === 'accept') return { 'fon.outcome': outcome.result };
  return {
    'fon.outcome': outcome.kind === 'release' ? 'released' : 'rejected',
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
