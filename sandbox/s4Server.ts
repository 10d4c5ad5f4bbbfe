/**
 * Stand-in for S/4HANA's sales-order APIs: `API_SALES_ORDER_SRV` (OData V2), entity set `A_SalesOrder`, and
 * `CE_SALESORDER_0001` (OData V4), entity set `SalesOrder`, both at once on their own paths.
 *
 * Integration tests, the crash suite, the benchmark and the embedded demo need a sales-order API they can
 * steer: set an order's state, make reads slow, fail or hang, script what each read of an order answers, and
 * count reads to prove a duplicate event did not cost a call. This is a real HTTP server (node:http, keep-alive, no per-request logging, since the
 * benchmark sends ~20k reads) that answers single-order reads and collection reads with a `$filter` of key terms
 * joined by `or`, in each version's JSON format (s4Entities.ts), with OData error bodies. It honours `$select`:
 * a release without `OverallDeliveryStatus` fails a request selecting it (docs/s4hana.md, V2 fields and releases).
 * Error codes other than SY/530 are plausible, not copied from a system: clients must key on the status.
 *
 * This file routes and times the answers; what the stand-in holds and how a test steers it is s4State.ts, what
 * a request answers s4Reads.ts, and the order endpoint of local mode s4OrderControl.ts. Collection queries of
 * both families (filters on change time and keys, ordering, `$top`, server-driven paging: reconciliation's reads)
 * are s4Collections.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CollectionControls, createCollections } from './s4Collections.js';
import { type Answer, odataError } from './s4Entities.js';
import { CONTROL_PATH, controlOrder } from './s4OrderControl.js';
import { answerRead, type Delay } from './s4Reads.js';
import { createReturnsStandIn, type ReturnsStandIn } from './s4Returns.js';
import { createS4State, type S4Controls } from './s4State.js';

export type { CollectionQuery } from './s4Collections.js';
export type { SalesOrderState } from './s4Entities.js';
export type { LoggedRequest, S4Fault, S4FaultFn, ScriptedRead } from './s4State.js';

export interface S4ServerOptions {
  port?: number;
  host?: string;
  latencyMs?: number;
  /** Emulate an older release whose A_SalesOrder has no `OverallDeliveryStatus` property at all. */
  omitOverallDeliveryStatus?: boolean;
}

/** Collection queries (CollectionControls) are steered for both families at once. */
export interface S4Server extends S4Controls, CollectionControls {
  /** http://127.0.0.1:port, no trailing slash */
  url: string;
  /** The customer-return APIs (s4Returns.ts), served on their own paths beside the sales orders. */
  returns: ReturnsStandIn;
  close(): Promise<void>;
}

export async function startS4Server(options: S4ServerOptions = {}): Promise<S4Server> {
  const state = createS4State(options.latencyMs ?? 0);
  const timers = new Set<NodeJS.Timeout>();
  const omitOverallDeliveryStatus = options.omitOverallDeliveryStatus === true;
  const collections = createCollections(() => state.retryAfterSeconds());
  const returns = createReturnsStandIn(collections);
  let url = '';

  function handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.url?.startsWith(CONTROL_PATH)) {
      void controlOrder(req, res, state);
      return;
    }
    let answer: Answer | 'hang';
    const delay: Delay = { until: [] };
    try {
      answer =
        returns.answer(req, url) ??
        answerRead(req, { state, url, omitOverallDeliveryStatus, collections }, delay);
    } catch (err) {
      // A throwing fault function is a test bug; surface it as a 500 instead of crashing the test process.
      answer = odataError('v2', 500, 'SANDBOX', `sandbox failed: ${String(err)}`);
    }
    // Leave the socket open: the client's timeout fires, or close() destroys it.
    if (answer === 'hang') return;
    const reply = answer;
    const delayMs = delay.latencyMs ?? state.latencyMs();
    const answerNow = () => {
      if (delayMs <= 0) {
        send(res, reply);
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        send(res, reply);
      }, delayMs);
      timers.add(timer);
    };
    if (delay.until.length === 0) answerNow();
    else Promise.allSettled(delay.until).then(answerNow);
  }

  const server = createServer(handle);
  // Outlive the clients' idle timeouts so a pooled socket is never closed under a request being sent.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1', backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    returns,
    ...state.controls,
    ...collections.controls,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        // Hung and keep-alive sockets would hold close() open forever.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.destroyed) return;
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(answer.headers?.['odata-version'] === undefined ? { dataserviceversion: '2.0' } : {}),
    ...answer.headers,
  });
  res.end(body);
}
