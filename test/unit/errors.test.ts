import { describe, expect, it } from 'vitest';
import { classify, failureReason, PermanentError, TransientError } from '../../src/errors.js';
import { refusal } from '../../src/notifications/smtpConnection.js';

const withCode = (code: string) => Object.assign(new Error(code), { code });
const httpError = (status: number) => Object.assign(new Error(`HTTP ${status}`), { response: { status } });
const smtpError = (code: number) =>
  refusal('the relay refused the message', 'EMESSAGE', 'DATA', { code, text: `${code} refused` });

describe('classify', () => {
  it.each([
    ['serialization failure', withCode('40001')],
    ['deadlock', withCode('40P01')],
    ['server shutting down', withCode('57P01')],
    ['connection exception class 08', withCode('08006')],
    ['connection refused', withCode('ECONNREFUSED')],
    ['request timeout', withCode('ECONNABORTED')],
    ['S/4HANA 503', httpError(503)],
    ['S/4HANA 500', httpError(500)],
    ['S/4HANA 429', httpError(429)],
    ['S/4HANA 401 (destination broken: an operator problem)', httpError(401)],
    ['SMTP 451', smtpError(451)],
    ['an error of unknown kind', new Error('something odd')],
    ['a thrown string', 'boom'],
    ['TransientError', new TransientError('x')],
  ])('treats %s as transient', (_name, err) => {
    expect(classify(err)).toBe('transient');
  });

  it.each([
    ['S/4HANA 400', httpError(400)],
    ['S/4HANA 404', httpError(404)],
    ['SMTP 550', smtpError(550)],
    ['PermanentError', new PermanentError('x')],
  ])('treats %s as permanent', (_name, err) => {
    expect(classify(err)).toBe('permanent');
  });

  it('looks through a wrapping error to its cause', () => {
    expect(classify(new Error('wrapped', { cause: httpError(400) }))).toBe('permanent');
    expect(classify(new Error('wrapped', { cause: withCode('40001') }))).toBe('transient');
  });

  it('ends on a chain of causes that loops back on itself', () => {
    const first = new Error('first');
    const second = new Error('second', { cause: first });
    first.cause = second;
    expect(classify(first)).toBe('transient');
  });

  it('reads a status given directly on the error', () => {
    expect(classify(Object.assign(new Error('x'), { status: 422 }))).toBe('permanent');
  });
});

describe('classify with a stated kind', () => {
  it('keeps a stated transient kind when the error also carries a permanent-looking status', () => {
    const redirect = Object.assign(new TransientError('S/4HANA redirected to a login page'), { status: 302 });
    expect(classify(redirect)).toBe('transient');
  });

  it('keeps a stated permanent kind whatever its cause says', () => {
    expect(classify(new PermanentError('bad answer', { cause: withCode('ECONNRESET') }))).toBe('permanent');
  });
});

describe('failureReason', () => {
  it('gives the error name and message', () => {
    expect(failureReason(new TypeError('x is not a function'))).toBe('TypeError: x is not a function');
    expect(failureReason(new TransientError('S/4HANA 503'))).toBe('TransientError: S/4HANA 503');
  });

  it('renders a thrown value that is not an error as text', () => {
    expect(failureReason('boom')).toBe('boom');
    expect(failureReason(42)).toBe('42');
    expect(failureReason(undefined)).toBe('undefined');
  });

  it('cuts a long message to 500 characters', () => {
    const reason = failureReason(new Error('x'.repeat(10_000)));
    expect(reason).toHaveLength(500);
    expect(reason.startsWith('Error: xxx')).toBe(true);
  });
});
