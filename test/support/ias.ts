import type { IasCredentials } from '../../src/http/eventHubAuth.js';
import { sendJson, startHttpsStub } from './httpsStub.js';
import { jwtSigner, type SignOptions } from './jwtSigner.js';

export interface IasTokenOptions extends Omit<SignOptions, 'header'> {
  /** The party the token was issued to; default the Event Hub's client. */
  azp?: string;
  /** Audience; default this app's IAS client. */
  aud?: string[];
}

export interface IasStub {
  /** The `identity` binding's credentials, as the app sees them. */
  credentials: IasCredentials;
  /** `ias.clientId` of the event-broker binding: the client Event Hub fetches its tokens with. */
  eventHubClientId: string;
  token(opts?: IasTokenOptions): string;
  /** The `x-azp` header of each key request: xssec asks the tenant for keys per calling party. */
  keyRequests: string[];
  /** While false, the keys endpoint answers 503, as a tenant in trouble would. */
  setKeysAvailable(available: boolean): void;
  close(): Promise<void>;
}

const APP_CLIENT_ID = 'fon-ias-client';
const EVENT_HUB_CLIENT_ID = 'event-hub-system-client';
const APP_TENANT = 'c0ffee00-0000-4000-8000-000000000012';

/**
 * A local SAP Cloud Identity Services tenant over HTTPS, as xssec's IdentityService reads one: the OIDC
 * configuration at /.well-known/openid-configuration names the keys endpoint, which publishes one RS256 key; tokens
 * are signed with it, with the tenant's URL as issuer. The certificate comes from test/support/globalSetup.tls.ts
 * and is trusted through NODE_EXTRA_CA_CERTS, as in production a public CA is.
 */
export async function startIasStub(): Promise<IasStub> {
  const signer = jwtSigner('ias-k1');
  const keyRequests: string[] = [];
  let keysAvailable = true;
  let origin = '';
  const server = await startHttpsStub((req, res) => {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    if (path === '/.well-known/openid-configuration') {
      return sendJson(res, 200, {
        issuer: origin,
        jwks_uri: `${origin}/oauth2/certs`,
        token_endpoint: `${origin}/oauth2/token`,
        grant_types_supported: ['client_credentials', 'jwt-bearer'],
      });
    }
    if (path === '/oauth2/certs') {
      keyRequests.push(String(req.headers['x-azp']));
      if (!keysAvailable) return sendJson(res, 503, { error: 'unavailable' });
      return sendJson(res, 200, { keys: [signer.jwk] });
    }
    sendJson(res, 404, {});
  });
  origin = server.origin;

  const token = ({
    azp = EVENT_HUB_CLIENT_ID,
    aud = [APP_CLIENT_ID],
    ...opts
  }: IasTokenOptions = {}): string =>
    // A technical user's token (client credentials of `azp`) for this app: what Event Hub sends.
    signer.sign(
      { iss: origin, sub: azp, azp, aud, app_tid: APP_TENANT, zone_uuid: APP_TENANT, sap_id_type: 'app' },
      opts,
    );

  return {
    credentials: { clientid: APP_CLIENT_ID, url: origin, domains: [`localhost:${server.port}`] },
    eventHubClientId: EVENT_HUB_CLIENT_ID,
    token,
    keyRequests,
    setKeysAvailable: (available) => {
      keysAvailable = available;
    },
    close: server.close,
  };
}

/** VCAP_SERVICES with the identity and event-broker bindings of `ias`, as Cloud Foundry sets them. */
export function eventHubBindings(ias: IasStub): string {
  return JSON.stringify({
    identity: [
      {
        label: 'identity',
        name: 'fon-ias',
        plan: 'application',
        credentials: { ...ias.credentials, 'credential-type': 'X509_GENERATED' },
      },
    ],
    'event-broker': [
      {
        label: 'event-broker',
        name: 'fon-event-hub',
        plan: 'event-connectivity',
        credentials: { 'authentication-type': 'X509_IAS', ias: { clientId: ias.eventHubClientId } },
      },
    ],
  });
}
