// One GET with node's own HTTP client on the destination's keep-alive agent: no per-request destination
// lookup, middleware chain or response interceptors. Failures carry what errors.ts classifies: a socket
// `code`, `ECONNABORTED` for a timeout (as axios reports it), or `response.status`.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Target } from './destinationTarget.js';

// An A_SalesOrder entity is a few kilobytes; anything near this is not the answer we asked for.
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface HttpAnswer {
  status: number;
  /** The body as text (UTF-8). */
  body: string;
}

/** A non-2xx answer. `response.status` is what errors.ts reads. */
export class HttpStatusError extends Error {
  override name = 'HttpStatusError';
  readonly response: { status: number };
  constructor(status: number, detail: string) {
    super(`S/4HANA answered HTTP ${status}${detail === '' ? '' : `: ${detail}`}`);
    this.response = { status };
  }
}

/**
 * GETs `path` (already encoded) with `query` added to the destination's own parameters, and returns the answer
 * whatever its status. The whole exchange is bounded by `timeoutMs`.
 */
export function httpGet(
  target: Extract<Target, { kind: 'direct' }>,
  path: string,
  query: Record<string, string>,
  timeoutMs: number,
): Promise<HttpAnswer> {
  // OData system query options keep their `$`: not every gateway decodes `%24format`.
  const search = Object.entries({ ...target.params, ...query })
    .map(
      ([key, value]) => `${key.startsWith('$') ? key : encodeURIComponent(key)}=${encodeURIComponent(value)}`,
    )
    .join('&');
  const url = `${target.baseUrl}${path}${search === '' ? '' : `?${search}`}`;
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        headers: { ...target.headers, accept: 'application/json' },
        agent: target.agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error(`S/4HANA answer exceeds ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
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
    req.end();
  });
}
