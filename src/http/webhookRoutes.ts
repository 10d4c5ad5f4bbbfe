// Event Mesh's webhook push: Event Mesh pushes a queue's messages to POST /events instead of the service pulling
// them over AMQP; deliveries take the push path of pushDelivery.ts. Contracts: CloudEvents HTTP protocol binding
// 1.0 and HTTP webhook 1.0 (the OPTIONS handshake).
import type { FastifyInstance } from 'fastify';
import type { Auth } from './auth.js';
import { deliver, type PushDeps, pushScope } from './pushDelivery.js';
import { SCOPES } from './scopes.js';

export interface WebhookDeps extends PushDeps {
  auth: Auth;
}

export function webhookRoutes(deps: WebhookDeps): (app: FastifyInstance) => Promise<void> {
  return (app) =>
    pushScope(app, (scope, signal) => {
      // The handshake is answered without a token on purpose: it only states consent to receive (CloudEvents
      // webhook spec 4: it "does not aim to establish an authentication or authorization context"), reveals
      // nothing and changes nothing, and whether Event Mesh sends the subscription's token with it is not
      // documented. Every delivery (POST) still needs the EventSubmit scope.
      scope.options('/events', async (request, reply) => {
        const origin = request.headers['webhook-request-origin'];
        reply.header('allow', 'OPTIONS, POST');
        if (typeof origin === 'string' && origin !== '') {
          reply.header('webhook-allowed-origin', origin).header('webhook-allowed-rate', '*');
        }
        return reply.code(200).send();
      });

      // The token is checked on request, before the body (up to 2 MiB) is read, as the admin API does.
      scope.post(
        '/events',
        { onRequest: deps.auth.requireScope(SCOPES.eventSubmit) },
        async (request, reply) => deliver(deps, 'webhook', request, reply, signal),
      );
    });
}
