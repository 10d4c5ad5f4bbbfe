// SAP Cloud Application Event Hub's push: Event Hub POSTs each event to the webhookUrl registered with the bound
// event-broker instance (binary mode: ce-* headers, the data as body; extensions such as sapconsumertenant,
// kafkapartition and kafkaoffset). There is no OPTIONS handshake. Deliveries take the push path of
// pushDelivery.ts, with channel `event-hub`; only Event Hub's own token is let in (eventHubAuth.ts).
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { deliver, type PushDeps, pushScope } from './pushDelivery.js';

export const EVENT_HUB_PATH = '/event-hub/events';

export interface EventHubDeps extends PushDeps {
  /** The check that the caller is the bound Event Hub: requireEventHubToken, always on. */
  requireEventHub: onRequestAsyncHookHandler;
}

export function eventHubRoutes(deps: EventHubDeps): (app: FastifyInstance) => Promise<void> {
  return (app) =>
    pushScope(app, (scope, signal) => {
      scope.post(EVENT_HUB_PATH, { onRequest: deps.requireEventHub }, async (request, reply) =>
        deliver(deps, 'event-hub', request, reply, signal),
      );
    });
}
