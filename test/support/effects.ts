// What tests of the effect statement (applyEffect) hand it: events parsed by the service's own parser, and the
// mail settings the composition root binds.
import { customerReturnEvent, type S4EventSpec, salesOrderEvent } from '../../sandbox/s4Events.js';
import { type ParsedEvent, parseCloudEvent } from '../../src/events/cloudEvent.js';
import type { EffectMail } from '../../src/events/effect.js';
import { EVENT_KEYS } from '../../src/families/index.js';

export const EFFECT_MAIL: EffectMail = {
  to: ['fleet-manager@fleet.example'],
  locale: 'en',
  messageIdDomain: 'fleet.example',
};

/** A sales-order event as the handler sees it once parsed. */
export function parsedEvent(spec: S4EventSpec): ParsedEvent {
  return parsedBody(salesOrderEvent(spec));
}

/** A customer-return event (`change` such as `Created`) as the handler sees it once parsed. */
export function parsedReturnEvent(
  customerReturn: string,
  change: string,
  spec: S4EventSpec = {},
): ParsedEvent {
  return parsedBody(customerReturnEvent(customerReturn, change, spec));
}

function parsedBody(text: string): ParsedEvent {
  const body = Buffer.from(text);
  const parsed = parseCloudEvent(
    { body, contentType: 'application/json', binaryAttributes: {} },
    1 << 20,
    EVENT_KEYS,
  );
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.event;
}
