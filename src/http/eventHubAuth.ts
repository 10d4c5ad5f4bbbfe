// Who may push to the Event Hub endpoint: SAP Cloud Application Event Hub itself. It calls with a token that the
// bound SAP Cloud Identity Services (IAS, binding `identity`) issued to Event Hub's own client, so the token must
// validate against that IAS tenant (signature against its keys, issuer among the binding's domains, audience =
// this app's IAS client, expiry), and its `azp` (the party the token was issued to) must be the `ias.clientId` of
// the bound `event-broker` service. Any other valid token is someone else's: 403. The check does not depend on
// AUTH, which governs the admin API and the Event Mesh webhook.
import { IdentityService } from '@sap/xssec';
import type { onRequestAsyncHookHandler } from 'fastify';
import { authenticate } from './auth.js';

/** The fields of an `identity` binding that token validation reads; a real binding has more. */
export interface IasCredentials {
  clientid: string;
  /** The IAS tenant, e.g. https://tenant.accounts.ondemand.com: its OIDC configuration names the keys. */
  url: string;
  /** Trusted issuer domains: a token's issuer must be one of them or a subdomain. */
  domains: string[];
}

export interface EventHubAuthSettings {
  identity: IasCredentials;
  /** `ias.clientId` of the bound event-broker service: the `azp` of Event Hub's tokens. */
  eventHubClientId: string;
}

/** An onRequest hook: it reads only headers, so a caller without Event Hub's token costs no body at all. */
export function requireEventHubToken(settings: EventHubAuthSettings): onRequestAsyncHookHandler {
  const service = new IdentityService(settings.identity);
  return async (request, reply) => {
    const ctx = await authenticate(service, request, reply);
    if (ctx === undefined) return reply;
    const azp = ctx.token.azp;
    request.caller = `client/${azp ?? ctx.token.clientId ?? 'unknown'}`;
    if (azp !== settings.eventHubClientId) {
      request.log.info({ caller: request.caller }, 'token not issued to the bound Event Hub');
      return reply
        .code(403)
        .send({ error: 'forbidden', message: 'only the bound Event Hub may deliver events here' });
    }
  };
}
