import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jwtSigner } from '../support/jwtSigner.js';
import {
  assertNoLeaks,
  checkLogFile,
  checkLogLine,
  guardedLogger,
  watchLogFor,
  watchServiceEnv,
} from '../support/logGuard.js';
import { ANN } from '../support/operators.js';

const SECRET = 'c0ffee-binding-secret';

/** The failure assertNoLeaks throws, or '' if it passes. */
function failure(): string {
  try {
    assertNoLeaks();
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('the log guard', () => {
  watchServiceEnv({
    MAIL_FROM: 'notifier@guard.example',
    MAIL_TO: 'manager@guard.example,deputy@guard.example',
    VCAP_SERVICES: JSON.stringify({ xsuaa: [{ credentials: { clientid: 'sb-fon', clientsecret: SECRET } }] }),
    DATABASE_URL: 'postgres://fon:db-pa%24%24word@db.internal:5432/fon',
    SMTP_URL: 'smtps://relay-user:relay-passw0rd@smtp.internal:465',
    AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=otlp-key-1234',
  });
  watchLogFor('a recipient address', 'Buyer@Customer.example');
  // Signing a user's token is what makes the guard watch what it says of the person.
  jwtSigner('guard-k1').sign({ user_name: ANN.logonName, email: ANN.email, family_name: ANN.familyName });

  it('fails with the offending line, the value masked', () => {
    checkLogLine('{"msg":"mail parked","err":{"message":"550 <deputy@guard.example>: rejected"}}');
    expect(assertNoLeaks).toThrow(
      'MAIL_TO in: {"msg":"mail parked","err":{"message":"550 <[MAIL_TO]>: rejected"}}',
    );
  });

  it.each([
    ['MAIL_FROM', 'from notifier@guard.example'],
    ['a recipient address, in any case', 'to buyer@customer.EXAMPLE'],
    ["a token's logon name", `caller user/sap.default/${ANN.logonName}`],
    ["a token's family name", `by ${ANN.familyName}`],
    ['a client secret', `secret ${SECRET}`],
    ['an OTLP header value', 'header otlp-key-1234'],
    ["DATABASE_URL's password, decoded", 'auth failed for db-pa$$word'],
    ["DATABASE_URL's password, as the URL writes it", 'connect fon:db-pa%24%24word@db.internal'],
    ["SMTP_URL's password", 'login relay-passw0rd'],
    ["AMQP_URL's password, in its URL form", 'connect amqp://guest:guest@127.0.0.1'],
    ['a JWT', 'token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmb24ifQ.c2ln'],
    ['a bearer token', 'authorization: Bearer 0123456789abcdefXYZ'],
  ])('catches %s and never repeats it', (_what, text) => {
    checkLogLine(`{"msg":"${text}"}`);
    const message = failure();
    expect(message).toMatch(/^the service logged what it must never log \(1 line\(s\)\)/);
    expect(message).not.toContain(text.split(' ').at(-1));
  });

  it('passes lines without them, and forgets what it reported', () => {
    checkLogLine('{"msg":"mail sent","messageId":"<1f2e@guard.example>"}');
    // A password that is its user's name is watched in its URL form only: the user's name alone is no leak.
    checkLogLine('{"msg":"broker connected","user":"guest"}');
    checkLogLine(`{"msg":"admin: mail retry","caller":"user/${ANN.userUuid}"}`);
    expect(assertNoLeaks).not.toThrow();
  });

  it('reads every line of a log file, and the debug lines of a guarded logger', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fon-guard-'));
    try {
      const file = join(dir, 'service.log');
      await writeFile(file, '{"msg":"started"}\n{"msg":"to notifier@guard.example"}\n');
      await checkLogFile(file);
      expect(failure()).toMatch(/\(1 line\(s\)\):\nMAIL_FROM in: /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    guardedLogger('silent').debug({ secret: 'kept' }, `tried ${SECRET}`);
    expect(failure()).toMatch(/a client secret in: .*"level":20/);
  });
});
