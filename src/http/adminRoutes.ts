// The operator's view and levers, under /api: what is known about an event or a family's key (an order, a
// return: each family's FamilyAdmin, handed in), the families as the console shows them, counts, mail that
// needs attention (and its retry), dead letters (and their replay). Reads need the Viewer scope, actions
// Admin. Every action is logged with the caller, never with a token or an email address.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Pool } from 'pg';
import type { HandleEvent } from '../events/outcome.js';
import { replayDeadLetter } from '../events/replay.js';
import { pushesNeedingAttention, retryPush } from '../portal/pushOutbox.js';
import {
  eventHistory,
  listDeadLetters,
  mailNeedingAttention,
  readDeadLetter,
  retryMail,
  summary,
} from './adminQueries.js';
import {
  audit,
  type ById,
  type ByKey,
  conflict,
  eventQuery,
  idParams,
  keyParams,
  notFound,
  type Page,
  pageQuery,
  type ReadPage,
} from './adminSchemas.js';
import type { Auth } from './auth.js';
import type { FamilyAdmin } from './familyAdmin.js';
import { SCOPES } from './scopes.js';
import { timeline } from './timeline.js';

export interface AdminDeps {
  pool: Pool;
  auth: Auth;
  handle: HandleEvent;
  /** Lets a retried mail go now instead of at the sender's next poll. */
  wakeMailSender: () => void;
  /** Lets a retried portal push go now. */
  wakePortalSender: () => void;
  /** The event families: the routes of their keys. */
  families: readonly FamilyAdmin[];
}

/** The admin part of the family a listed row names (its timeline's `family`); undefined for none. */
function adminOf(families: readonly FamilyAdmin[], name: string): FamilyAdmin | undefined {
  return families.find((family) => family.timeline.family === name);
}

/** Where a listed row's document is looked up, below /api (`orders/1000473`): for the console to link to it. */
function linksOf(
  families: readonly FamilyAdmin[],
  row: { family: string; key: string },
): { lookup: string | null } {
  const family = adminOf(families, row.family);
  return {
    lookup:
      family === undefined ? null : `${family.lookup.slice('/api/'.length)}/${encodeURIComponent(row.key)}`,
  };
}

/** The retry of a listed push, below /api: by its own family's key, whatever order a case refers to. */
function retryPathOf(families: readonly FamilyAdmin[], push: { family: string; key: string }): string | null {
  const family = adminOf(families, push.family);
  return family === undefined
    ? null
    : `${family.pushes.slice('/api/'.length)}/${encodeURIComponent(push.key)}/retry`;
}

export function adminRoutes(deps: AdminDeps): (app: FastifyInstance) => Promise<void> {
  const { pool, auth, families } = deps;
  return async (app) => {
    // On request, before validation and body parsing: a caller without a valid token learns nothing, not
    // even whether a parameter was well-formed.
    const viewer = { onRequest: auth.requireScope(SCOPES.viewer) };
    const admin = { onRequest: auth.requireScope(SCOPES.admin) };

    // Each family's lookups by its key: what is known, or 404 saying what is not.
    for (const family of families) {
      const known = (reply: FastifyReply, key: string, found: object | null) =>
        found ?? notFound(reply, `nothing is known about ${family.what} ${key}`);
      const byKey = { ...viewer, schema: { params: keyParams(family.param, family.keyPattern) } };
      app.get<ByKey>(`${family.lookup}/:${family.param}`, byKey, async (request, reply) => {
        const key = family.normalise(request.params[family.param] as string);
        return known(reply, key, await family.overview(pool, key));
      });
      app.get<ByKey>(`${family.lookup}/:${family.param}/timeline`, byKey, async (request, reply) => {
        const key = family.normalise(request.params[family.param] as string);
        const story = await timeline(pool, family.timeline, key);
        return known(reply, key, story && { [family.param]: key, ...story });
      });
    }

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

    // The families as the console names and searches them, so that it hard-codes none.
    app.get('/api/families', viewer, async () =>
      families.map((family) => ({
        ...family.console,
        // As runs and listed rows name the family (GET /api/reconcile/runs).
        name: family.timeline.family,
        lookup: family.lookup,
        param: family.param,
        noun: family.what,
        keyPattern: family.keyPattern.source,
      })),
    );

    app.get('/api/summary', viewer, async () => summary(pool, families));

    // A list an operator pages through: the page asked for, and its items.
    const pagedList = (url: string, read: ReadPage) =>
      app.get<Page>(url, { ...viewer, schema: { querystring: pageQuery } }, async (request) => {
        const { limit, offset } = request.query;
        return { limit, offset, items: await read(pool, limit, offset) };
      });

    pagedList('/api/mail', async (db, limit, offset) =>
      (await mailNeedingAttention(db, limit, offset)).map((mail) => ({
        ...mail,
        ...linksOf(families, mail),
        retry: `mail/${mail.id}/retry`,
      })),
    );

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

    pagedList('/api/portal-pushes', async (db, limit, offset) =>
      (await pushesNeedingAttention(db, limit, offset)).map((push) => ({
        ...push,
        ...linksOf(families, push),
        retry: retryPathOf(families, push),
      })),
    );

    // A parked or failing push back in line, by its family's key as the request gives it.
    for (const family of families) {
      const byKey = { ...admin, schema: { params: keyParams(family.param, family.keyPattern) } };
      app.post<ByKey>(`${family.pushes}/:${family.param}/retry`, byKey, async (request, reply) => {
        const value = request.params[family.param] as string;
        const result = await retryPush(pool, family.timeline.family, value);
        audit(request, { [family.param]: value, result: result.kind }, 'admin: portal push retry');
        if (result.kind === 'not_found') return notFound(reply, `no portal push for ${family.what} ${value}`);
        if (result.kind === 'done') return conflict(reply, `the portal push of ${value} is done`);
        deps.wakePortalSender();
        return { [family.param]: value, state: 'pending', pushId: result.identity };
      });
    }

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
