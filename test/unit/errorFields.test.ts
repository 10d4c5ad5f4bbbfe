import { AxiosError, AxiosHeaders } from 'axios';
import { DatabaseError } from 'pg';
import { describe, expect, it } from 'vitest';
import { errorFields } from '../../src/telemetry/errorFields.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { scrubAddresses } from '../../src/telemetry/scrubAddresses.js';

const ADDRESS = 'fleet.buyer@customer.example';
const TOKEN = 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmb24ifQ.c2lnbmF0dXJl';

function databaseError(): DatabaseError {
  const err = new DatabaseError(
    'new row for relation "mail_outbox" violates check constraint "mail_outbox_state_check"',
    200,
    'error',
  );
  Object.assign(err, {
    code: '23514',
    severity: 'ERROR',
    detail: `Failing row contains (1, 7300000, {${ADDRESS}}, parked).`,
    table: 'mail_outbox',
    constraint: 'mail_outbox_state_check',
  });
  return err;
}

function httpError(): AxiosError {
  const headers = new AxiosHeaders({ authorization: TOKEN });
  return new AxiosError('Request failed with status code 500', 'ERR_BAD_RESPONSE', { headers }, undefined, {
    status: 500,
    statusText: 'Internal Server Error',
    headers: { 'set-cookie': ['session=secret'] },
    config: { headers },
    data: { error: { message: `no customer ${ADDRESS}` } },
  });
}

/** One log line of `{ err }` through the service's logger. */
function logLine(err: unknown): string {
  const lines: string[] = [];
  createLogger('info', { write: (line: string) => void lines.push(line) }).error({ err }, 'failed');
  expect(lines).toHaveLength(1);
  return lines[0] ?? '';
}

describe('scrubAddresses', () => {
  it.each([
    [
      '550 5.1.1 <a.b+c@x.example>: Recipient address rejected',
      '550 5.1.1 <[address]>: Recipient address rejected',
    ],
    ['to a@x.example, b@y.example', 'to [address], [address]'],
    ['postgres://user:pass@db.internal:5432/fon', 'postgres://user:[address]:5432/fon'],
    ['Grüße an jürgen@straße.example.', 'Grüße an [address].'],
    ['no address here', 'no address here'],
  ])('turns %j into %j', (text, scrubbed) => {
    expect(scrubAddresses(text)).toBe(scrubbed);
  });
});

describe('errorFields', () => {
  it("keeps a PostgreSQL error's SQLSTATE, constraint and table, never its detail", () => {
    const fields = errorFields(databaseError());
    expect(fields).toMatchObject({
      type: 'error',
      kind: 'transient',
      code: '23514',
      constraint: 'mail_outbox_state_check',
      table: 'mail_outbox',
    });
    expect(JSON.stringify(fields)).not.toContain(ADDRESS);
    expect(fields).not.toHaveProperty('detail');
  });

  it("keeps an HTTP error's status and code, never its headers or body", () => {
    const fields = errorFields(httpError());
    expect(fields).toMatchObject({
      type: 'AxiosError',
      code: 'ERR_BAD_RESPONSE',
      status: 500,
      message: 'Request failed with status code 500',
    });
    const text = JSON.stringify(fields);
    for (const secret of [ADDRESS, TOKEN, 'session=secret']) expect(text).not.toContain(secret);
  });

  it('follows three causes, without the address in their messages', () => {
    const root = new Error('socket closed');
    const cause = new Error(`mailbox ${ADDRESS} is full`, { cause: new Error('retry', { cause: root }) });
    const fields = errorFields(new Error('send failed', { cause: new Error('pool', { cause }) }));
    expect(fields.cause?.cause?.message).toBe('mailbox [address] is full');
    expect(fields.cause?.cause?.cause?.message).toBe('retry');
    expect(fields.cause?.cause?.cause?.cause).toBeUndefined();
    expect(JSON.stringify(fields)).not.toContain(ADDRESS);
  });

  it('keeps the stack frames but not the first line, which repeats the message', () => {
    const fields = errorFields(new Error(`refused ${ADDRESS}`));
    expect(fields.stack).toMatch(/^\s+at /);
    expect(fields.stack).not.toContain('refused');
  });

  it('describes a thrown value that is not an object', () => {
    expect(errorFields(`refused ${ADDRESS}`)).toEqual({
      type: 'string',
      kind: 'transient',
      message: 'refused [address]',
    });
  });
});

describe('the logger', () => {
  it('logs every { err } by its allowed fields, whatever the error carries', () => {
    for (const err of [databaseError(), httpError()]) {
      const line = logLine(err);
      for (const secret of [ADDRESS, TOKEN, 'Failing row', 'session=secret'])
        expect(line).not.toContain(secret);
      expect(JSON.parse(line).err).toEqual(errorFields(err));
    }
  });
});
