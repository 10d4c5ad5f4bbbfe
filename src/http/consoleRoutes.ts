// The operators' console under /console/: a fixed list of static files shipped with the service, read once at
// start. The page calls the admin API (/api) and nothing else; the data it shows is the API's, with its auth.
// The files themselves carry no data, so they are served to anyone, as the approuter's login page would be.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';

const CONSOLE_DIR = new URL('../../console/', import.meta.url);

const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'dom.js': 'text/javascript; charset=utf-8',
  'pages.js': 'text/javascript; charset=utf-8',
  'reconcilePage.js': 'text/javascript; charset=utf-8',
  'story.js': 'text/javascript; charset=utf-8',
} as const;

/**
 * Scripts and styles from this origin only, no inline script or style, no framing, and the page may talk to its
 * own origin alone.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const files = new Map<string, { type: string; body: Buffer }>();
  for (const [name, type] of Object.entries(FILES)) {
    files.set(name, { type, body: await readFile(new URL(name, CONSOLE_DIR)) });
  }

  const serve = (name: string, reply: FastifyReply) => {
    const file = files.get(name);
    if (file === undefined)
      return reply.code(404).send({ error: 'not_found', message: 'no such console file' });
    return reply.headers(HEADERS).type(file.type).send(file.body);
  };
  app.get('/console', async (_request, reply) => reply.redirect('/console/'));
  app.get('/console/', async (_request, reply) => serve('index.html', reply));
  app.get<{ Params: { file: string } }>('/console/:file', async (request, reply) =>
    serve(request.params.file, reply),
  );
}
