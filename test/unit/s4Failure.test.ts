import { describe, expect, it } from 'vitest';
import { classify, PermanentError, TransientError } from '../../src/errors.js';
import { httpFailure, parseRetryAfter, s4Failure, wrapFailure } from '../../src/s4/s4Failure.js';

describe('S/4HANA failures', () => {
  it('reads Retry-After as seconds or as an HTTP date, and nothing else', () => {
    const now = Date.parse('2026-12-01T10:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('Tue, 01 Dec 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 01 Dec 2026 09:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('states the kind of an HTTP status from the one table, carrying the status and Retry-After', () => {
    const throttled = httpFailure(429, 'Too many requests', 2000);
    expect(throttled).toBeInstanceOf(TransientError);
    expect(throttled).toMatchObject({ status: 429, retryAfterMs: 2000 });
    expect(throttled.message).toBe('S/4HANA answered HTTP 429: Too many requests');
    expect(httpFailure(400, '')).toBeInstanceOf(PermanentError);
    expect(httpFailure(503, '')).toBeInstanceOf(TransientError);
    expect(httpFailure(401, '')).toBeInstanceOf(TransientError);
  });

  it('keeps a stated kind whatever fields are added later', () => {
    const redirect = s4Failure('transient', 'S/4HANA redirected (HTTP 302)', { status: 302 });
    Object.assign(redirect, { response: { status: 404 }, code: '22P02' });
    expect(classify(redirect)).toBe('transient');
    const refused = s4Failure('permanent', 'refused', { status: 503 });
    expect(classify(refused)).toBe('permanent');
  });

  it('wraps a foreign error with its kind from the table and keeps it as cause', () => {
    const socket = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const wrapped = wrapFailure(socket, 'S/4HANA read');
    expect(wrapped).toBeInstanceOf(TransientError);
    expect(wrapped.cause).toBe(socket);
    expect(wrapped.message).toBe('S/4HANA read failed (ECONNREFUSED): connect ECONNREFUSED');
    const stated = httpFailure(400, 'x');
    expect(wrapFailure(stated, 'S/4HANA read')).toBe(stated);
  });
});
