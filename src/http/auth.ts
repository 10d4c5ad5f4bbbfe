import { createSecurityContext, errors, type Service, type Token, XsuaaService } from '@sap/xssec';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { scrubAddresses } from '../telemetry/scrubAddresses.js';

/** The fields of an xsuaa binding that token validation reads; a real binding has more. */
export interface XsuaaCredentials {
  clientid: string;
  xsappname: string;
  uaadomain: string;
  url: string;
  clientsecret?: string;
}

export interface Auth {
  /** Declares `request.caller` once on the root instance, so every request keeps one object shape. */
  decorate(app: FastifyInstance): void;
  /**
   * A route's onRequest hook for a local scope name such as `Admin` (checked as `<xsappname>.Admin`). It reads
   * only headers, so it runs before the body is read: a caller without a valid token costs no body at all.
   */
  requireScope(scope: string): onRequestAsyncHookHandler;
  /** Which of `scopes` the request's token grants; called after requireScope let the request through. */
  grantedScopes(request: FastifyRequest, scopes: readonly string[]): Promise<string[]>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who called, for audit logs and stored records (callerOf); null on open routes. */
    caller: string | null;
  }
}

// RFC 7235: the scheme is case-insensitive. xssec itself takes the second word of any scheme.
const BEARER = /^bearer +([^\s]+) *$/i;

/**
 * Who a token speaks for, as logs and stored records name the caller: `client/<client id>` for a client's own
 * token, `user/<id>` for a user's. The id is stable and no personal data: `user_uuid`, the user's UUID in SAP
 * Cloud Identity Services, where the token carries it (IAS tokens do); else the token's subject (for XSUAA, its own
 * user id). Never the logon name, email or name: with the SAP ID service, the logon name is the email address.
 */
export function callerOf(token: Token): string {
  if (
    token.grantType === 'client_credentials' ||
    (token.payload as { sap_id_type?: string }).sap_id_type === 'app'
  ) {
    return `client/${token.clientId}`;
  }
  return `user/${token.userId || token.subject}`;
}

const decorate = (app: FastifyInstance): void => {
  app.decorateRequest('caller', null);
};

const unauthorized = (reply: FastifyReply, challenge: string, message: string): FastifyReply =>
  reply.code(401).header('www-authenticate', challenge).send({ error: 'unauthorized', message });

export function createXsuaaAuth(credentials: XsuaaCredentials): Auth {
  const service = new XsuaaService(credentials);
  return {
    decorate,
    requireScope: (scope) => async (request, reply) => {
      const ctx = await authenticate(service, request, reply);
      if (ctx === undefined) return reply;
      request.caller = callerOf(ctx.token);
      if (!ctx.checkLocalScope(scope)) {
        request.log.info({ caller: request.caller, scope }, 'scope missing');
        return reply.code(403).send({ error: 'forbidden', message: `missing scope ${scope}` });
      }
    },
    // The token validated in onRequest; validated again here (the keys are cached) rather than kept on every
    // request for the one route that asks.
    grantedScopes: async (request, scopes) => {
      const jwt = BEARER.exec(request.headers.authorization ?? '')?.[1] ?? '';
      const ctx = await createSecurityContext(service, { jwt, req: { headers: request.headers } });
      return scopes.filter((scope) => ctx.checkLocalScope(scope));
    },
  };
}

/**
 * Validates the request's Bearer token with `service` (signature against the service's keys, issuer, audience,
 * expiry). Returns the security context, or undefined once it has answered: 401 without a token or with an
 * invalid one, 503 when the keys cannot be fetched (the caller is not at fault and may retry).
 */
export async function authenticate<S extends Service>(
  service: S,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Awaited<ReturnType<S['createSecurityContext']>> | undefined> {
  const jwt = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (jwt === undefined) {
    unauthorized(reply, 'Bearer', 'a Bearer token is required');
    return undefined;
  }
  try {
    // A fresh config object per call: xssec writes into it (the correlation id from the headers).
    return await createSecurityContext(service, { jwt, req: { headers: request.headers } });
  } catch (err) {
    // Never log `err` itself: InvalidJwtError carries the token in its `jwt` property.
    if (err instanceof errors.NetworkError) {
      // RequestError, TimeoutError, ResponseError: the key endpoint failed, not the caller.
      // The message quotes the key endpoint's URL and the body of its answer, which may name anyone.
      request.log.warn({ reason: err.name, detail: scrubAddresses(err.message) }, 'token keys unavailable');
      reply
        .code(503)
        .header('retry-after', '5')
        .send({ error: 'unavailable', message: 'cannot verify tokens right now' });
      return undefined;
    }
    if (err instanceof errors.XssecError && err.statusCode === 401) {
      request.log.info({ reason: err.name }, 'token rejected');
      unauthorized(reply, 'Bearer error="invalid_token"', err.message);
      return undefined;
    }
    throw err; // ConfigurationError and anything unexpected: our fault, a 500
  }
}

/**
 * Lets every request through as caller `local/no-auth`. For local runs only: config selects it solely on an
 * explicit AUTH=none, and nothing may fall back to it when the xsuaa binding is missing.
 */
export function createNoAuth(): Auth {
  return {
    decorate,
    requireScope: () => async (request) => {
      request.caller = 'local/no-auth';
    },
    grantedScopes: async (_request, scopes) => [...scopes],
  };
}
