// What the admin routes (adminRoutes.ts) accept and how they answer: the parameter schemas, checked by fastify
// before a handler runs, and the replies and audit line every route shares.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';

/** A family's key in the path, checked by the rule its events' key follows before a handler runs. */
export const keyParams = (param: string, pattern: RegExp) => ({
  type: 'object',
  required: [param],
  properties: { [param]: { type: 'string', pattern: pattern.source } },
});

// A bigint identity: digits only, short enough for PostgreSQL's bigint.
export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' } },
} as const;

export const eventQuery = {
  type: 'object',
  required: ['source', 'id'],
  properties: {
    source: { type: 'string', minLength: 1, maxLength: 512 },
    id: { type: 'string', minLength: 1, maxLength: 256 },
  },
} as const;

// Offsets cost a scan of what they skip: past this, narrow the question instead.
export const pageQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    offset: { type: 'integer', minimum: 0, maximum: 100_000, default: 0 },
  },
} as const;

export type Page = { Querystring: { limit: number; offset: number } };
export type ById = { Params: { id: string } };
export type ByKey = { Params: Record<string, string> };
export type ReadPage = (db: Pool, limit: number, offset: number) => Promise<unknown[]>;

export const notFound = (reply: FastifyReply, message: string): FastifyReply =>
  reply.code(404).send({ error: 'not_found', message });

export const conflict = (reply: FastifyReply, message: string): FastifyReply =>
  reply.code(409).send({ error: 'conflict', message });

export const audit = (request: FastifyRequest, fields: Record<string, unknown>, message: string): void =>
  request.log.info({ caller: request.caller, ...fields }, message);
