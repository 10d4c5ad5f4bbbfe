// The fleet portal's HTTP API: one PUT of absolute values per push, and what its answer means. A PUT of the
// whole state is safe to repeat, so a crash between the portal's answer and our bookkeeping only sends the same
// request again, with the same Idempotency-Key.
import { executeHttpRequest } from '@sap-cloud-sdk/http-client';
import { failureReason } from '../errors.js';
import { createDestinationTarget } from '../s4/destinationTarget.js';
import { type HttpAnswer, httpExchange } from '../s4/httpGet.js';
import { parseRetryAfter } from '../s4/s4Failure.js';
import { scrubAddresses } from '../telemetry/scrubAddresses.js';
import { type PushKind, pushKindOf } from './pushKind.js';
import type { ClaimedPush } from './pushOutbox.js';

/** How the portal answered one push. */
export type PushAnswer =
  /** 2xx: the portal holds this state. */
  | { kind: 'pushed'; status: number }
  /** 409 or 412: the portal already holds a newer state; nothing to do. */
  | { kind: 'conflict'; status: number }
  /** 408, 425, 429, 5xx, a timeout or a connection error: try again later, not before `retryAfterMs`. */
  | { kind: 'transient'; reason: string; retryAfterMs?: number | undefined }
  /** Any other 4xx: the request itself is refused; an operator must look. */
  | { kind: 'parked'; reason: string };

export interface PortalApi {
  put(push: ClaimedPush): Promise<PushAnswer>;
}

// The statuses that say "not now" rather than "not this": everything else from 400 to 499 parks.
const TRANSIENT_4XX = new Set([408, 425, 429]);

/** The meaning of a portal answer's status (the README's table of answers). */
export function classifyAnswer(answer: Pick<HttpAnswer, 'status' | 'body' | 'retryAfter'>): PushAnswer {
  const { status } = answer;
  if (status >= 200 && status < 300) return { kind: 'pushed', status };
  if (status === 409 || status === 412) return { kind: 'conflict', status };
  const message = errorMessage(answer.body);
  const reason = `portal answered ${status}${message === '' ? '' : `: ${message}`}`;
  if (TRANSIENT_4XX.has(status) || status >= 500 || status < 200)
    return { kind: 'transient', reason, retryAfterMs: parseRetryAfter(answer.retryAfter) };
  return { kind: 'parked', reason };
}

/**
 * What an error answer says of itself: the `error` (or `error.message`, or `message`) string of a JSON body, without
 * addresses and at most 200 characters. Never the body as such: it may echo the pushed row back.
 */
function errorMessage(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return '';
  }
  const { error, message } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as {
    error?: unknown;
    message?: unknown;
  };
  const nested =
    typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  const text = [error, nested, message].find((value): value is string => typeof value === 'string') ?? '';
  return scrubAddresses(text).slice(0, 200);
}

/** Where a push goes and what it says, as the family its row names writes it. */
function pathAndBody(families: readonly PushKind[], push: ClaimedPush): [path: string, body: string] {
  const family = pushKindOf(families, push.family);
  if (family === undefined) throw new Error(`no event family ${push.family} pushes`);
  const { path, body } = family.request(push);
  return [path, JSON.stringify(body)];
}

export interface PortalApiOptions {
  destination: string;
  timeoutMs: number;
  /** The event families: each writes the path and body of its rows. */
  families: readonly PushKind[];
}

export function createPortalApi(options: PortalApiOptions): PortalApi {
  const target = createDestinationTarget(options.destination);

  async function send(path: string, body: string, headers: Record<string, string>): Promise<HttpAnswer> {
    const resolved = await target.get();
    if (resolved.kind === 'direct')
      return httpExchange(
        resolved,
        `${resolved.baseUrl}${path}`,
        { method: 'PUT', headers, body },
        options.timeoutMs,
      );
    // Through a proxy (Cloud Connector): the SDK's own request path, which knows the proxy's authentication.
    try {
      const response = await executeHttpRequest(
        { destinationName: options.destination },
        { method: 'put', url: path, headers, data: body, timeout: options.timeoutMs },
        { fetchCsrfToken: false },
      );
      return { status: response.status, body: '', retryAfter: undefined };
    } catch (err) {
      const response = (err as { response?: { status?: unknown; headers?: Record<string, unknown> } })
        .response;
      if (typeof response?.status !== 'number') throw err;
      const retryAfter = response.headers?.['retry-after'];
      return {
        status: response.status,
        body: '',
        retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
      };
    }
  }

  return {
    async put(push) {
      const headers = { 'content-type': 'application/json', 'idempotency-key': push.pushId };
      let request: [path: string, body: string];
      try {
        request = pathAndBody(options.families, push);
      } catch (err) {
        // A row no family can push as it stands: an operator's to see, not to retry.
        return { kind: 'parked', reason: failureReason(err) };
      }
      let answer: HttpAnswer;
      try {
        answer = await send(...request, headers);
      } catch (err) {
        // A timeout, a refused or dropped connection, a destination that cannot be resolved right now.
        target.invalidate();
        return { kind: 'transient', reason: failureReason(err) };
      }
      // Credentials the portal refuses may have been rotated in the destination: resolve it afresh next time.
      if (answer.status === 401 || answer.status === 403) target.invalidate();
      return classifyAnswer(answer);
    },
  };
}
