import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { XsuaaCredentials } from '../../src/http/auth.js';
import { sendJson, startHttpsStub } from './httpsStub.js';
import { jwtSigner, type SignOptions } from './jwtSigner.js';
import type { Operator } from './operators.js';

export interface TokenOptions extends Omit<SignOptions, 'header'> {
  /** Local scope names, issued as `fon!t1.<Scope>`. */
  scopes?: string[];
  /** A user token for this operator, as the approuter forwards it, instead of a client-credentials token. */
  user?: Operator;
  /** A user token without `user_uuid`, as XSUAA issues for a user whose identity provider gives none. */
  withoutUserUuid?: boolean;
}

/** An OAuth client of the subaccount with the authorities (full scope names) its tokens carry. */
export interface StubClient {
  clientid: string;
  clientsecret: string;
  authorities: string[];
}

/** What `cf service-key fon-uaa <key>` shows of the credentials a webhook subscription needs. */
export interface ServiceKey {
  clientid: string;
  clientsecret: string;
  /** The token endpoint is this URL + `/oauth/token`. */
  url: string;
}

export interface XsuaaStub {
  credentials: XsuaaCredentials;
  /** A service key of the app's own instance: its client gets the authorities xs-security.json names. */
  serviceKey: ServiceKey;
  token(opts?: TokenOptions): string;
  close(): Promise<void>;
}

const CLIENT_ID = 'sb-fon!t1';
const XSAPPNAME = 'fon!t1';
const ZONE = 'a1b2c3d4-0000-4000-8000-000000000001';

/**
 * The authorities XSUAA gives an instance's own client from its security descriptor: the `authorities` entries
 * of this app (`$XSAPPNAME.<scope>`), named with the instance's xsappname.
 */
export function ownAuthorities(descriptorPath: URL, xsappname: string): string[] {
  const descriptor = JSON.parse(readFileSync(descriptorPath, 'utf8')) as { authorities?: string[] };
  return (descriptor.authorities ?? [])
    .filter((authority) => authority.startsWith('$XSAPPNAME.'))
    .map((authority) => authority.replace('$XSAPPNAME', xsappname));
}

/** The client named by HTTP Basic or, as XSUAA also accepts, by client_id and client_secret in the form. */
async function clientOf(req: IncomingMessage): Promise<{ id: string; secret: string; grant: string | null }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const grant = form.get('grant_type');
  if (basic === undefined)
    return { id: form.get('client_id') ?? '', secret: form.get('client_secret') ?? '', grant };
  const pair = Buffer.from(basic, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  return { id: pair.slice(0, colon), secret: pair.slice(colon + 1), grant };
}

/**
 * A local XSUAA for the app `fon!t1` over HTTPS (the certificate comes from test/support/globalSetup.tls.ts):
 * one RS256 key at /token_keys, as xssec requires, and /oauth/token, which issues client-credentials tokens to
 * the app's own client (authorities from the repository's xs-security.json) and to `otherClients`.
 */
export async function startXsuaaStub(otherClients: StubClient[] = []): Promise<XsuaaStub> {
  const signer = jwtSigner('k1');
  const own: StubClient = {
    clientid: CLIENT_ID,
    clientsecret: `${randomUUID()}$binding-secret`,
    authorities: ownAuthorities(new URL('../../xs-security.json', import.meta.url), XSAPPNAME),
  };
  const clients = [own, ...otherClients];
  let origin = '';

  const signed = (claims: Record<string, unknown>, opts: SignOptions = {}): string =>
    signer.sign(claims, { ...opts, header: { jku: `${origin}/token_keys` } });

  const claims = (clientid: string, scope: string[]) => ({
    iss: `${origin}/oauth/token`,
    client_id: clientid,
    cid: clientid,
    azp: clientid,
    zid: ZONE,
    ext_attr: { enhancer: 'XSUAA', subaccountid: ZONE, zdn: 'fleet' },
    scope,
  });

  // XSUAA's answer to a client-credentials grant: the client's authorities as scopes, and as audiences the
  // client and every app whose scopes it holds.
  const tokenEndpoint = async (req: IncomingMessage, res: ServerResponse) => {
    const { id, secret, grant } = await clientOf(req);
    if (grant !== 'client_credentials') return sendJson(res, 400, { error: 'unsupported_grant_type' });
    const client = clients.find(
      (candidate) => candidate.clientid === id && candidate.clientsecret === secret,
    );
    if (client === undefined) return sendJson(res, 401, { error: 'unauthorized' });
    const scope = ['uaa.resource', ...client.authorities];
    const apps = client.authorities.map((authority) => authority.slice(0, authority.lastIndexOf('.')));
    const payload = {
      ...claims(client.clientid, scope),
      authorities: scope,
      sub: client.clientid,
      grant_type: 'client_credentials',
      aud: [...new Set(['uaa', client.clientid, ...apps])],
    };
    sendJson(res, 200, { access_token: signed(payload), token_type: 'bearer', expires_in: 599 });
  };

  const server = await startHttpsStub((req, res) => {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    if (req.method === 'POST' && path === '/oauth/token') return void tokenEndpoint(req, res);
    const found = path === '/token_keys';
    sendJson(res, found ? 200 : 404, found ? { keys: [signer.jwk] } : {});
  });
  origin = server.origin;

  const token = ({ scopes = [], user, withoutUserUuid, ...opts }: TokenOptions = {}): string => {
    // A user token of the authorization code flow through the approuter, whose client is the app's own.
    const who = user
      ? {
          grant_type: 'authorization_code',
          user_name: user.logonName,
          origin: 'sap.default',
          user_id: user.xsuaaUserId,
          sub: user.xsuaaUserId,
          email: user.email,
          given_name: user.givenName,
          family_name: user.familyName,
          ...(withoutUserUuid ? {} : { user_uuid: user.userUuid }),
        }
      : { grant_type: 'client_credentials', sub: CLIENT_ID };
    const scope = scopes.map((s) => `${XSAPPNAME}.${s}`);
    return signed({ ...claims(CLIENT_ID, scope), aud: [CLIENT_ID, XSAPPNAME], ...who }, opts);
  };

  return {
    credentials: {
      clientid: CLIENT_ID,
      xsappname: XSAPPNAME,
      uaadomain: `localhost:${server.port}`,
      url: origin,
    },
    serviceKey: { clientid: own.clientid, clientsecret: own.clientsecret, url: origin },
    token,
    close: server.close,
  };
}

/** The service's environment for real token validation against this stub: AUTH=xsuaa, the stub bound as xsuaa. */
export function xsuaaEnv(stub: XsuaaStub): Record<string, string> {
  const binding = { xsuaa: [{ name: 'uaa', label: 'xsuaa', credentials: stub.credentials }] };
  return { AUTH: 'xsuaa', VCAP_SERVICES: JSON.stringify(binding) };
}
