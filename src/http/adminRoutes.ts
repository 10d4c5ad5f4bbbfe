// The operator's view and levers, under /api: what is known about an order or an event, counts, mail that
// needs attention (and its retry), dead letters (and their replay). Reads need the Viewer scope, actions
// Admin. Every action is logged with the caller, never with a token or an email address.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import type { HandleEvent } from '../events/outcome.js';
import { replayDeadLetter } from '../events/replay.js';
import { customerReturnKey } from '../families/customerReturn/events.js';
import { returnOverview } from '../families/customerReturn/returnOverview.js';
import { pushesNeedingAttention, retryPush } from '../portal/pushOutbox.js';
import {
  eventHistory,
  listDeadLetters,
  mailNeedingAttention,
  orderOverview,
  readDeadLetter,
  retryMail,
  summary,
} from './adminQueries.js';
import {
  audit,
  type ById,
  conflict,
  customerReturnParams,
  eventQuery,
  idParams,
  notFound,
  type Page,
  pageQuery,
  type ReadPage,
  salesOrderParams,
} from './adminSchemas.js';
import type { Auth } from './auth.js';
import { SCOPES } from './scopes.js';
import { ORDER_TIMELINE, RETURN_TIMELINE, timeline } from './timeline.js';

export interface AdminDeps {
  pool: Pool;
  auth: Auth;
  handle: HandleEvent;
  /** Lets a retried mail go now instead of at the sender's next poll. */
  wakeMailSender: () => void;
  /** Lets a retried portal push go now. */
  wakePortalSender: () => void;
}

export function adminRoutes(deps: AdminDeps): (app: FastifyInstance) => Promise<void> {
  const { pool, auth } = deps;
  return async (app) => {
    // On request, before validation and body parsing: a caller without a valid token learns nothing, not
    // even whether a parameter was well-formed.
    const viewer = { onRequest: auth.requireScope(SCOPES.viewer) };
    const admin = { onRequest: auth.requireScope(SCOPES.admin) };

    // A lookup answers what is known, or 404 saying what is not.
    app.get<{ Params: { salesOrder: string } }>(
      '/api/orders/:salesOrder',
      { ...viewer, schema: { params: salesOrderParams } },
      async ({ params: { salesOrder } }, reply) =>
        (await orderOverview(pool, salesOrder)) ??
        notFound(reply, `nothing is known about sales order ${salesOrder}`),
    );

    app.get<{ Params: { salesOrder: string } }>(
      '/api/orders/:salesOrder/timeline',
      { ...viewer, schema: { params: salesOrderParams } },
      async ({ params: { salesOrder } }, reply) => {
        const story = await timeline(pool, ORDER_TIMELINE, salesOrder);
        return story
          ? { salesOrder, ...story }
          : notFound(reply, `nothing is known about sales order ${salesOrder}`);
      },
    );

    /** A read by the return's key as every table holds it: `0060000000` is return 60000000. */
    const byReturn =
      (read: (customerReturn: string) => Promise<object | null>) =>
      async (request: FastifyRequest<{ Params: { customerReturn: string } }>, reply: FastifyReply) => {
        const raw = request.params.customerReturn;
        const customerReturn = customerReturnKey(raw) ?? raw;
        return (
          (await read(customerReturn)) ??
          notFound(reply, `nothing is known about customer return ${customerReturn}`)
        );
      };
    app.get<{ Params: { customerReturn: string } }>(
      '/api/returns/:customerReturn',
      { ...viewer, schema: { params: customerReturnParams } },
      byReturn((customerReturn) => returnOverview(pool, customerReturn)),
    );
    app.get<{ Params: { customerReturn: string } }>(
      '/api/returns/:customerReturn/timeline',
      { ...viewer, schema: { params: customerReturnParams } },
      byReturn(async (customerReturn) => {
        const story = await timeline(pool, RETURN_TIMELINE, customerReturn);
        return story && { customerReturn, ...story };
      }),
    );

    // What the caller may do, so that the console shows a Viewer no button it may not use.
    app.get('/api/me', viewer, async (request) => ({
      scopes: await auth.grantedScopes(request, [SCOPES.viewer, SCOPES.admin]),
    }));

    app.get<{ Querystring: { source: string; id: string } }>(
      '/api/events',
      { ...viewer, schema: { querystring: eventQuery } },
      async ({ query }, reply) =>
        (await eventHistory(pool, query.source, query.id)) ??
        notFound(reply, 'nothing is known about an event with this source and id'),
    );

    app.get('/api/summary', viewer, async () => summary(pool));

    // A list an operator pages through: the page asked for, and its items.
    const pagedList = (url: string, read: ReadPage) =>
      app.get<Page>(url, { ...viewer, schema: { querystring: pageQuery } }, async (request) => {
        const { limit, offset } = request.query;
        return { limit, offset, items: await read(pool, limit, offset) };
      });

    pagedList('/api/mail', mailNeedingAttention);

    app.post<ById>(
      '/api/mail/:id/retry',
      { ...admin, schema: { params: idParams } },
      async (request, reply) => {
        const { id } = request.params;
        const result = await retryMail(pool, id);
        audit(request, { mailId: id, result: result.kind }, 'admin: mail retry');
        if (result.kind === 'not_found') return notFound(reply, `no mail ${id}`);
        if (result.kind === 'sent') return conflict(reply, `mail ${id} was already sent`);
        deps.wakeMailSender();
        return { id, state: 'pending', messageId: result.identity };
      },
    );

    pagedList('/api/portal-pushes', pushesNeedingAttention);

    /** A parked or failing push back in line: an order's by its sales order, a case's by its customer return. */
    const pushRetry =
      (key: 'salesOrder' | 'customerReturn', what: string) =>
      async (request: FastifyRequest<{ Params: Record<string, string> }>, reply: FastifyReply) => {
        const value = request.params[key] as string;
        const result = await retryPush(
          pool,
          value,
          key === 'customerReturn' ? 'customer_return' : 'sales_order',
        );
        audit(request, { [key]: value, result: result.kind }, 'admin: portal push retry');
        if (result.kind === 'not_found') return notFound(reply, `no portal push for ${what} ${value}`);
        if (result.kind === 'done') return conflict(reply, `the portal push of ${value} is done`);
        deps.wakePortalSender();
        return { [key]: value, state: 'pending', pushId: result.identity };
      };
    app.post<{ Params: Record<string, string> }>(
      '/api/portal-pushes/:salesOrder/retry',
      { ...admin, schema: { params: salesOrderParams } },
      pushRetry('salesOrder', 'sales order'),
    );
    app.post<{ Params: Record<string, string> }>(
      '/api/portal-pushes/warranty-cases/:customerReturn/retry',
      { ...admin, schema: { params: customerReturnParams } },
      pushRetry('customerReturn', 'customer return'),
    );

    pagedList('/api/dead-letters', listDeadLetters);

    app.get<ById>(
      '/api/dead-letters/:id',
      { ...viewer, schema: { params: idParams } },
      async ({ params: { id } }, reply) =>
        (await readDeadLetter(pool, id)) ?? notFound(reply, `no dead letter ${id}`),
    );

    app.post<ById>(
      '/api/dead-letters/:id/replay',
      { ...admin, schema: { params: idParams } },
      async (request, reply) => {
        const { id } = request.params;
        const result = await replayDeadLetter(pool, id, deps.handle);
        if (result.kind !== 'handled') {
          audit(request, { deadLetterId: id, result: result.kind }, 'admin: dead letter replay refused');
          return result.kind === 'not_found'
            ? notFound(reply, `no dead letter ${id}`)
            : conflict(reply, `dead letter ${id} was already replayed at ${result.replayedAt.toISOString()}`);
        }
        const { outcome, replayedAt } = result;
        const detail = outcome.kind === 'accept' ? { result: outcome.result } : { code: outcome.code };
        audit(request, { deadLetterId: id, outcome: outcome.kind, ...detail }, 'admin: dead letter replay');
        return outcome.kind === 'accept'
          ? { outcome: 'accept', result: outcome.result, replayedAt }
          : { outcome: outcome.kind, code: outcome.code, reason: outcome.reason };
      },
    );
  };
}
