import { generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import type { XsuaaCredentials } from '../../src/http/auth.js';
import { sendJson, startHttpsStub } from './httpsStub.js';

export interface TokenOptions {
  /** Local scope names, issued as `fon!t1.<Scope>`. */
  scopes?: string[];
  /** Negative for an expired token; mind xssec's 60 s leeway. */
  expiresInSeconds?: number;
  /** Flip one bit of the signature. */
  tamper?: boolean;
  /** Sign with a key the stub does not publish (same kid). */
  otherKey?: boolean;
  /** A user token for this logon name instead of a client-credentials token. */
  user?: string;
}

export interface XsuaaStub {
  credentials: XsuaaCredentials;
  token(opts?: TokenOptions): string;
  close(): Promise<void>;
}

const CLIENT_ID = 'sb-fon!t1';
const XSAPPNAME = 'fon!t1';
const ZONE = 'a1b2c3d4-0000-4000-8000-000000000001';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });

/**
 * A local XSUAA that publishes one RS256 key at /token_keys over HTTPS, as xssec requires, and signs tokens
 * for the app `fon!t1`. The certificate comes from test/support/globalSetup.tls.ts.
 */
export async function startXsuaaStub(): Promise<XsuaaStub> {
  const signing = rsa();
  const stranger = rsa();
  const jwks = {
    keys: [{ ...signing.publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' }],
  };
  const server = await startHttpsStub((req, res) => {
    const found = new URL(req.url ?? '/', 'https://localhost').pathname === '/token_keys';
    sendJson(res, found ? 200 : 404, found ? jwks : {});
  });
  const { origin, port } = server;

  const token = (opts: TokenOptions = {}): string => {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + (opts.expiresInSeconds ?? 600);
    const who = opts.user
      ? {
          grant_type: 'authorization_code',
          user_name: opts.user,
          origin: 'sap.default',
          user_id: randomUUID(),
        }
      : { grant_type: 'client_credentials', sub: CLIENT_ID };
    const payload = {
      jti: randomUUID(),
      iss: `${origin}/oauth/token`,
      client_id: CLIENT_ID,
      cid: CLIENT_ID,
      azp: CLIENT_ID,
      aud: [CLIENT_ID, XSAPPNAME],
      zid: ZONE,
      ext_attr: { enhancer: 'XSUAA', subaccountid: ZONE, zdn: 'fleet' },
      iat: Math.min(now, exp - 60),
      exp,
      scope: (opts.scopes ?? []).map((s) => `${XSAPPNAME}.${s}`),
      ...who,
    };
    const data = `${b64({ alg: 'RS256', typ: 'JWT', kid: 'k1', jku: `${origin}/token_keys` })}.${b64(payload)}`;
    const key: KeyObject = (opts.otherKey ? stranger : signing).privateKey;
    const signature = sign('sha256', Buffer.from(data), key);
    if (opts.tamper) signature[10] = (signature[10] ?? 0) ^ 1;
    return `${data}.${signature.toString('base64url')}`;
  };

  return {
    credentials: { clientid: CLIENT_ID, xsappname: XSAPPNAME, uaadomain: `localhost:${port}`, url: origin },
    token,
    close: server.close,
  };
}

/** The service's environment for real token validation against this stub: AUTH=xsuaa, the stub bound as xsuaa. */
export function xsuaaEnv(stub: XsuaaStub): Record<string, string> {
  const binding = { xsuaa: [{ name: 'uaa', label: 'xsuaa', credentials: stub.credentials }] };
  return { AUTH: 'xsuaa', VCAP_SERVICES: JSON.stringify(binding) };
}
