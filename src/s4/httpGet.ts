// One GET with node's own HTTP client on the destination's keep-alive agent: no per-request destination
// lookup, middleware chain or response interceptors. Failures below HTTP carry what errors.ts classifies: a
// socket `code`, or `ECONNABORTED` for a timeout (as axios reports it); a family's api.ts wraps them.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type Context, inSpan, ROOT_CONTEXT, SpanKind } from '../telemetry/tracing.js';
import type { Target } from './destinationTarget.js';

// 50 sales order headers are a few hundred kilobytes; anything near this is not the answer we asked for.
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export interface HttpAnswer {
  status: number;
  /** The body as text (UTF-8). */
  body: string;
  retryAfter: string | undefined;
}

/** The URL of `path` (already encoded) with `query` added to the destination's own parameters. */
export function buildUrl(
  target: Extract<Target, { kind: 'direct' }>,
  path: string,
  query: Record<string, string>,
): string {
  // OData system query options keep their `$`: not every gateway decodes `%24format`.
  const search = Object.entries({ ...target.params, ...query })
    .map(
      ([key, value]) => `${key.startsWith('$') ? key : encodeURIComponent(key)}=${encodeURIComponent(value)}`,
    )
    .join('&');
  return `${target.baseUrl}${path}${search === '' ? '' : `?${search}`}`;
}

/** GETs `url` and returns the answer whatever its status. The whole exchange is bounded by `timeoutMs`. */
export function httpGet(
  target: Extract<Target, { kind: 'direct' }>,
  url: string,
  timeoutMs: number,
  parent: Context = ROOT_CONTEXT,
): Promise<HttpAnswer> {
  return httpExchange(
    target,
    url,
    { method: 'GET', headers: { accept: 'application/json' } },
    timeoutMs,
    parent,
  );
}

export interface HttpCall {
  method: string;
  /** Added to the destination's own headers (authentication among them). */
  headers: Record<string, string>;
  body?: string;
}

/**
 * Sends one request to `url` and returns the answer whatever its status, bounded by `timeoutMs`, in a client
 * span under `parent` with the HTTP semantic conventions (the destination's headers, which carry credentials, are
 * not recorded).
 */
export function httpExchange(
  target: Extract<Target, { kind: 'direct' }>,
  url: string,
  call: HttpCall,
  timeoutMs: number,
  parent: Context = ROOT_CONTEXT,
): Promise<HttpAnswer> {
  return inSpan(call.method, { kind: SpanKind.CLIENT }, parent, async (span) => {
    // Only a recorded span pays for its attributes: with tracing off this is a no-op on every request.
    const recording = span.isRecording();
    if (recording) {
      const { hostname, port, protocol } = new URL(url);
      span.setAttributes({
        'http.request.method': call.method,
        'url.full': url,
        'server.address': hostname,
        'server.port': Number(port || (protocol === 'https:' ? 443 : 80)),
      });
    }
    const answer = await exchange(target, url, call, timeoutMs);
    if (recording) {
      span.setAttribute('http.response.status_code', answer.status);
      if (answer.status >= 400) span.setAttribute('error.type', String(answer.status));
    }
    return answer;
  });
}

function exchange(
  target: Extract<Target, { kind: 'direct' }>,
  url: string,
  call: HttpCall,
  timeoutMs: number,
): Promise<HttpAnswer> {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: call.method,
        headers: { ...target.headers, ...call.headers },
        agent: target.agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error(`answer exceeds ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(timer);
          const retryAfter = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(Object.assign(new Error(`timeout of ${timeoutMs}ms exceeded`), { code: 'ECONNABORTED' }));
    }, timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(call.body);
  });
}
