// Reconciliation's requests to S/4HANA: the same destination, HTTP client and failure kinds as event reads, and
// the destination's limit and pause (src/s4/destinationLimit.ts), but below event reads and one at a time. Event
// reads take a free place in their own microtasks when a request ends; reconciliation looks for one only a
// macrotask later, so it takes what event reads left, and it sends one request at a time per destination,
// whatever the families and runs asking. A 429 or 503 with Retry-After pauses the destination for everyone and
// is asked again after the pause; any other failure is thrown, and the run that asked ends failed.
import { setImmediate as nextMacrotask, setTimeout as sleep } from 'node:timers/promises';
import { answerBody } from '../s4/answerBody.js';
import type { DestinationLimit, DestinationReader } from '../s4/destinationLimit.js';
import { createDestinationTarget, type Target } from '../s4/destinationTarget.js';
import { buildUrl, type HttpAnswer, httpGet } from '../s4/httpGet.js';
import { failureDetail, wrapFailure } from '../s4/s4Failure.js';
import { sdkGet } from '../s4/sdkGet.js';

/** How many 429 or 503 answers in a row a request waits out before the run gives up until its next turn. */
export const MAX_THROTTLED = 5;

export interface Answered {
  body: unknown;
  /** The URL asked: what a relative next link is resolved against. */
  url: string;
}

export interface ReconcileRequests {
  /**
   * GETs the entity set at `path` (encoded) with `query`, or, with `link`, a next link the server sent
   * (`__next`, `@odata.nextLink`), resolved against the URL that answered it. `errorMessage` reads the version's
   * error body; `counted` sees every HTTP request sent, those answered 429 or 503 included.
   */
  get(
    request: { path: string; query: Record<string, string> } | { link: string; from: string },
    errorMessage: (body: unknown) => string,
    counted: () => void,
  ): Promise<Answered>;
}

export interface ReconcileRequestsOptions {
  destination: string;
  timeoutMs: number;
  limit: DestinationLimit;
}

// Behind a proxy the base URL is the SDK's, not known here: links are resolved against this one, and their path
// and query go to the SDK.
const PROXIED_BASE = 'http://destination.invalid';

export function createReconcileRequests(options: ReconcileRequestsOptions): ReconcileRequests {
  const { limit } = options;
  const target = createDestinationTarget(options.destination);
  const woken: Array<() => void> = [];
  const reader: DestinationReader = {
    wake: () => {
      for (const resolve of woken.splice(0)) resolve();
    },
    // Nothing of reconciliation has a budget that a pause could outlast: it waits the pause out.
    expire: () => {},
  };
  limit.join(reader);
  // One request of reconciliation at a time on this destination: each waits for the one before.
  let line: Promise<unknown> = Promise.resolve();

  /** Takes a place of the destination's limit, after its pause and after the event reads that wait. */
  async function place(): Promise<void> {
    for (;;) {
      const paused = limit.pausedUntil() - Date.now();
      if (paused > 0) await sleep(paused);
      await nextMacrotask();
      if (limit.pausedUntil() > Date.now()) continue;
      if (limit.hasRoom()) {
        limit.started();
        return;
      }
      await new Promise<void>((resolve) => woken.push(resolve));
    }
  }

  async function send(resolved: Target, url: string): Promise<HttpAnswer> {
    await place();
    try {
      const answer =
        resolved.kind === 'direct'
          ? await httpGet(resolved, url, options.timeoutMs)
          : await sdkGet(options.destination, pathOf(url), {}, options.timeoutMs);
      // Refused credentials may be a token that expired within the refresh period: resolve again next time.
      if (answer.status === 401 || answer.status === 403) target.invalidate();
      return answer;
    } catch (err) {
      throw wrapFailure(err, 'S/4HANA collection read');
    } finally {
      limit.ended(reader);
    }
  }

  async function get(
    request: { path: string; query: Record<string, string> } | { link: string; from: string },
    errorMessage: (body: unknown) => string,
    counted: () => void,
  ): Promise<Answered> {
    for (let throttled = 0; ; throttled++) {
      const resolved = await target.get().catch((err) => {
        throw wrapFailure(err, `resolving destination ${options.destination}`);
      });
      const base: Extract<Target, { kind: 'direct' }> =
        resolved.kind === 'direct'
          ? resolved
          : { kind: 'direct', baseUrl: PROXIED_BASE, headers: {}, params: {}, agent: undefined };
      const url =
        'link' in request
          ? linkUrl(base, request.link, request.from)
          : buildUrl(base, request.path, request.query);
      counted();
      const answer = await send(resolved, url);
      try {
        return { body: answerBody(answer, errorMessage), url };
      } catch (err) {
        const { status, retryAfterMs } = failureDetail(err);
        if ((status !== 429 && status !== 503) || retryAfterMs === undefined || throttled >= MAX_THROTTLED)
          throw err;
        limit.pause(retryAfterMs, status);
      }
    }
  }

  return {
    get(request, errorMessage, counted) {
      const asked = line.then(() => get(request, errorMessage, counted));
      line = asked.catch(() => {});
      return asked;
    },
  };
}

/**
 * Where a next link points. An absolute link names S/4HANA's own host, which need not be the destination's (a
 * gateway or proxy in between): its path and query go to the destination, whose credentials never go elsewhere.
 */
function linkUrl(base: Extract<Target, { kind: 'direct' }>, link: string, from: string): string {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(link)) return new URL(link, from).toString();
  const { pathname, search } = new URL(link);
  return `${base.baseUrl}${pathname}${search}`;
}

/** A URL's path and query: what the SDK asks its destination for. */
function pathOf(url: string): string {
  const { pathname, search } = new URL(url);
  return `${pathname}${search}`;
}
