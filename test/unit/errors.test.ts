import { describe, expect, it } from 'vitest';
import { classify, PermanentError, TransientError } from '../../src/errors.js';

const withCode = (code: string) => Object.assign(new Error(code), { code });
const httpError = (status: number) => Object.assign(new Error(`HTTP ${status}`), { response: { status } });
const smtpError = (responseCode: number) =>
  Object.assign(new Error(`SMTP ${responseCode}`), { responseCode });

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

  it('reads a status given directly on the error', () => {
    expect(classify(Object.assign(new Error('x'), { status: 422 }))).toBe('permanent');
  });
});
