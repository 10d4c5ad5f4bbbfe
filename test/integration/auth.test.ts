import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createXsuaaAuth, type XsuaaCredentials } from '../../src/http/auth.js';
import { ANN } from '../support/operators.js';
import { startXsuaaStub, type XsuaaStub } from '../support/xsuaa.js';

function buildApp(credentials: XsuaaCredentials): FastifyInstance {
  const app = Fastify({ logger: false });
  const auth = createXsuaaAuth(credentials);
  auth.decorate(app);
  app.get('/admin', { preHandler: auth.requireScope('Admin') }, async (request) => ({
    caller: request.caller,
  }));
  app.get('/view', { preHandler: auth.requireScope('Viewer') }, async (request) => ({
    caller: request.caller,
  }));
  return app;
}

describe('xsuaa auth preHandler with real signature validation', () => {
  let stub: XsuaaStub;
  let app: FastifyInstance;

  beforeAll(async () => {
    stub = await startXsuaaStub();
    app = buildApp(stub.credentials);
  });

  afterAll(async () => {
    await app.close();
    await stub.close();
  });

  const get = (url: string, authorization?: string) =>
    app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } });

  it('answers 401 with a Bearer challenge when the Authorization header is missing', async () => {
    const res = await get('/admin');
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json()).toMatchObject({ error: 'unauthorized' });
  });

  it('answers 401 to the Basic scheme even when it carries a valid token', async () => {
    const res = await get('/admin', `Basic ${stub.token({ scopes: ['Admin'] })}`);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('answers 401 to a token that is not a JWT', async () => {
    const res = await get('/admin', 'Bearer not-a-jwt');
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('answers 401 when the signature was tampered with', async () => {
    const res = await get('/admin', `Bearer ${stub.token({ scopes: ['Admin'], tamper: true })}`);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'unauthorized' });
  });

  it('answers 401 to an expired token', async () => {
    const res = await get('/admin', `Bearer ${stub.token({ scopes: ['Admin'], expiresInSeconds: -120 })}`);
    expect(res.statusCode).toBe(401);
  });

  it('answers 401 to a token signed by a key XSUAA does not publish', async () => {
    const res = await get('/admin', `Bearer ${stub.token({ scopes: ['Admin'], otherKey: true })}`);
    expect(res.statusCode).toBe(401);
  });

  it('answers 403 naming the scope when a valid token lacks it', async () => {
    const res = await get('/admin', `Bearer ${stub.token({ scopes: ['Viewer'] })}`);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'forbidden', message: 'missing scope Admin' });
  });

  it('lets a client token with the scope through and tells the handler who called', async () => {
    const res = await get('/admin', `Bearer ${stub.token({ scopes: ['Admin'] })}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ caller: 'client/sb-fon!t1' });
  });

  it('names a user caller by user UUID, never by logon name or email', async () => {
    const res = await get('/view', `bearer ${stub.token({ scopes: ['Viewer'], user: ANN })}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ caller: `user/${ANN.userUuid}` });
  });

  it("names a user whose token carries no user UUID by XSUAA's user id", async () => {
    const token = stub.token({ scopes: ['Viewer'], user: ANN, withoutUserUuid: true });
    const res = await get('/view', `Bearer ${token}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ caller: `user/${ANN.xsuaaUserId}` });
  });

  it('answers 503, not 401, when the token keys cannot be fetched', async () => {
    // A fresh stub and app: its xssec service has never cached keys, so the fetch must happen and fail.
    const down = await startXsuaaStub();
    const downApp = buildApp(down.credentials);
    const token = down.token({ scopes: ['Admin'] });
    await down.close();
    const res = await downApp.inject({
      method: 'GET',
      url: '/admin',
      headers: { authorization: `Bearer ${token}` },
    });
    await downApp.close();
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'unavailable' });
  });
});
