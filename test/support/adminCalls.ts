// Calls to the admin API as its roles make them: real tokens from the XSUAA stand-in, sent through inject().
import type { FastifyInstance } from 'fastify';
import type { Operator } from './operators.js';
import type { XsuaaStub } from './xsuaa.js';

/** `app` and `stub` are getters: both start in beforeAll. */
export function adminCalls(app: () => FastifyInstance, stub: () => XsuaaStub) {
  return {
    viewer: () => stub().token({ scopes: ['Viewer'] }),
    admin: () => stub().token({ scopes: ['Viewer', 'Admin'] }),
    /** A user's token, as the approuter forwards it from the console. */
    userViewer: (user: Operator) => stub().token({ scopes: ['Viewer'], user }),
    userAdmin: (user: Operator) => stub().token({ scopes: ['Viewer', 'Admin'], user }),
    call(method: 'GET' | 'POST', url: string, token?: string) {
      return app().inject({
        method,
        url,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
    },
  };
}
