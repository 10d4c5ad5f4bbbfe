// The operators' levers on reconciliation (docs/operations.md): POST /api/reconcile/runs (Admin) starts runs,
// GET /api/reconcile/runs (Viewer) lists the latest. Starting is audit-logged with the caller, as every admin
// action is.
import type { FastifyInstance } from 'fastify';
import { audit, conflict } from './adminSchemas.js';
import type { Auth } from './auth.js';
import { SCOPES } from './scopes.js';

export const RUN_MODES = ['delta', 'sweep', 'baseline'] as const;
export type RunMode = (typeof RUN_MODES)[number];

/** A run as GET /api/reconcile/runs gives it. */
export interface RunView {
  id: string;
  family: string;
  mode: RunMode;
  status: 'running' | 'done' | 'failed';
  windowFrom: string | null;
  windowTo: string | null;
  pages: number;
  rows: number;
  repairs: number;
  s4Requests: number;
  startedAt: Date;
  endedAt: Date | null;
  error?: { class: string; text: string };
}

/** Reconciliation as these routes ask it; undefined when it is off (S4_SOURCE unset). */
export interface ReconcileControl {
  families: readonly string[];
  /** Starts a run of the family and returns its id, or 'busy' while one is going on. */
  start(family: string, mode: RunMode): Promise<{ id: string } | 'busy'>;
  latest(limit: number): Promise<RunView[]>;
}

/** How many runs the list gives. */
const LATEST = 100;

export function reconcileRoutes(deps: {
  auth: Auth;
  control: ReconcileControl | undefined;
}): (app: FastifyInstance) => void {
  const { auth, control } = deps;
  return (app) => {
    const viewer = { onRequest: auth.requireScope(SCOPES.viewer) };
    const admin = { onRequest: auth.requireScope(SCOPES.admin) };

    app.get('/api/reconcile/runs', viewer, async () => ({
      runs: control === undefined ? [] : await control.latest(LATEST),
    }));

    app.post<{ Body: unknown }>('/api/reconcile/runs', admin, async (request, reply) => {
      if (control === undefined) return conflict(reply, 'reconciliation is off: S4_SOURCE is not set');
      const asked = readBody(request.body, control.families);
      if (typeof asked === 'string') return reply.code(400).send({ error: 'bad_request', message: asked });
      const families = asked.family === undefined ? control.families : [asked.family];
      const runs: string[] = [];
      const busy: string[] = [];
      for (const family of families) {
        const started = await control.start(family, asked.mode);
        if (started === 'busy') busy.push(family);
        else runs.push(started.id);
      }
      audit(
        request,
        { family: asked.family ?? 'every', mode: asked.mode, runs, busy },
        'admin: reconcile runs',
      );
      if (runs.length === 0)
        return conflict(reply, `a run is going on for ${busy.join(' and ')}: try again when it has ended`);
      return reply.code(202).send({ runs });
    });
  };
}

/** The body's family and mode (both optional: every family, delta), or why not. */
function readBody(body: unknown, families: readonly string[]): { family?: string; mode: RunMode } | string {
  const fields = body ?? {};
  if (typeof fields !== 'object' || Array.isArray(fields))
    return 'the body must be a JSON object such as {"family": "salesOrder", "mode": "delta"}';
  const { family, mode = 'delta', ...rest } = fields as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return `unknown field ${unknown.map((name) => JSON.stringify(name)).join(', ')}`;
  if (family !== undefined && (typeof family !== 'string' || !families.includes(family)))
    return `unknown family ${JSON.stringify(family)}: one of ${families.join(', ')}`;
  if (typeof mode !== 'string' || !(RUN_MODES as readonly string[]).includes(mode))
    return `unknown mode ${JSON.stringify(mode)}: one of ${RUN_MODES.join(', ')}`;
  return { ...(family === undefined ? {} : { family }), mode: mode as RunMode };
}
