// Event Mesh as the service meets it, made of local parts: an HTTPS OAuth2 token endpoint (client credentials by
// client secret, or by client certificate over mTLS as with X.509 binding credentials) and a WebSocket endpoint at
// /protocols/amqp10ws that accepts the upgrade only with a bearer token it issued and has not expired, then
// relays the bytes to the local RabbitMQ's AMQP 1.0 port.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { type WebSocket, WebSocketServer } from 'ws';
import { sendJson, startHttpsStub } from './httpsStub.js';
import { AMQP_HOST, AMQP_PORT } from './services.js';

export const AMQP10WS_PATH = '/protocols/amqp10ws';
export const CLIENT_ID = 'sb-fleet-order-notifier!b1|event-mesh!b2';
const CLIENT_SECRET = 'emis-secret';

export interface EventMeshStub {
  /** An EMIS-shaped VCAP_SERVICES (label event-mesh-message-client) pointing at this stub. */
  vcapServices(credentials: { clientsecret: string } | { certificate: string; key: string }): string;
  clientSecret: string;
  /** Tokens handed out, in order. */
  issued: string[];
  /** The bearer token of each upgrade accepted, in order. */
  accepted: string[];
  /** Upgrades refused for a missing, unknown or expired token. */
  refused: number;
  /** Token requests refused for wrong client credentials. */
  tokenRefusals: number;
  /** Every token issued so far stops being valid. */
  expireTokens(): void;
  /** Closes every relayed WebSocket and its broker connection, as a broker or proxy dropping the socket. */
  dropConnections(): void;
  close(): Promise<void>;
}

/**
 * `mtls`: the token endpoint takes a client certificate signed by `ca` (PEM) and no secret, as for
 * `credential-type: x509`.
 */
export async function startEventMeshStub(mtls?: { ca: string }): Promise<EventMeshStub> {
  const issued: string[] = [];
  const valid = new Set<string>();
  const accepted: string[] = [];
  const open = new Set<{ ws: WebSocket; tcp: Socket }>();
  let refused = 0;
  let tokenRefusals = 0;

  const stub = await startHttpsStub(
    (req, res) => {
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/oauth/token') return sendJson(res, 404, {});
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') !== 'client_credentials')
          return sendJson(res, 400, { error: 'unsupported_grant_type' });
        if (!authenticated(req, form)) {
          tokenRefusals++;
          return sendJson(res, 401, { error: 'invalid_client' });
        }
        const token = randomBytes(16).toString('hex');
        issued.push(token);
        valid.add(token);
        sendJson(res, 200, { access_token: token, token_type: 'bearer', expires_in: 3600 });
      });
    },
    // The certificate is asked for on every connection but checked only by the token endpoint.
    mtls && { requestCert: true, rejectUnauthorized: false, ca: mtls.ca },
  );

  function authenticated(req: IncomingMessage, form: URLSearchParams): boolean {
    if (mtls) {
      const socket = req.socket as TLSSocket;
      const clientId = form.get('client_id') ?? basicUser(req);
      // A resumed TLS session without a certificate reports authorized too: a certificate must be there.
      const certificate = socket.getPeerCertificate();
      return socket.authorized && certificate.subject !== undefined && clientId === CLIENT_ID;
    }
    const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
    return req.headers.authorization === basic;
  }

  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has('amqp') ? 'amqp' : false),
  });
  stub.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const token = req.headers.authorization?.replace(/^Bearer /, '');
    if (req.url !== AMQP10WS_PATH || token === undefined || !valid.has(token)) {
      refused++;
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    accepted.push(token);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const tcp = connect(AMQP_PORT, AMQP_HOST);
      const pair = { ws, tcp };
      open.add(pair);
      const end = () => {
        open.delete(pair);
        ws.terminate();
        tcp.destroy();
      };
      ws.on('message', (data: Buffer) => tcp.write(data));
      tcp.on('data', (data) => ws.send(data));
      ws.on('close', end).on('error', end);
      tcp.on('close', end).on('error', end);
    });
  });

  return {
    vcapServices(credentials) {
      const binding = {
        name: 'fon-event-mesh',
        label: 'event-mesh-message-client',
        plan: 'message-client',
        credentials: {
          namespace: 'fleet/fon/orders',
          messaging: [
            {
              protocol: ['amqp10ws'],
              broker: { type: 'sapmgw' },
              uri: `wss://localhost:${stub.port}${AMQP10WS_PATH}`,
              oa2: {
                clientid: CLIENT_ID,
                granttype: 'client_credentials',
                tokenendpoint: `${stub.origin}/oauth/token`,
                ...credentials,
              },
            },
          ],
        },
      };
      return JSON.stringify({ 'event-mesh-message-client': [binding] });
    },
    clientSecret: CLIENT_SECRET,
    issued,
    accepted,
    get refused() {
      return refused;
    },
    get tokenRefusals() {
      return tokenRefusals;
    },
    expireTokens: () => valid.clear(),
    dropConnections() {
      for (const { ws, tcp } of open) {
        ws.terminate();
        tcp.destroy();
      }
    },
    async close() {
      for (const { ws, tcp } of open) {
        ws.terminate();
        tcp.destroy();
      }
      wss.close();
      await stub.close();
    },
  };
}

function basicUser(req: IncomingMessage): string | undefined {
  const basic = req.headers.authorization?.match(/^Basic (.+)$/)?.[1];
  return basic === undefined ? undefined : Buffer.from(basic, 'base64').toString('utf8').split(':')[0];
}
