import { describe, expect, it } from 'vitest';
import { assertNoLeaks, checkLogLine, watchLogFor, watchServiceEnv } from '../support/logGuard.js';

const SECRET = 'c0ffee-binding-secret';

describe('the log guard', () => {
  watchServiceEnv({
    MAIL_FROM: 'notifier@guard.example',
    MAIL_TO: 'manager@guard.example,deputy@guard.example',
    VCAP_SERVICES: JSON.stringify({ xsuaa: [{ credentials: { clientid: 'sb-fon', clientsecret: SECRET } }] }),
  });
  watchLogFor('a recipient address', 'Buyer@Customer.example');

  it('fails with the offending line, the value masked', () => {
    checkLogLine('{"msg":"mail parked","err":{"message":"550 <deputy@guard.example>: rejected"}}');
    expect(assertNoLeaks).toThrow(
      'MAIL_TO in: {"msg":"mail parked","err":{"message":"550 <[MAIL_TO]>: rejected"}}',
    );
  });

  it.each([
    ['MAIL_FROM', 'from notifier@guard.example'],
    ['a recipient address, in any case', 'to buyer@customer.EXAMPLE'],
    ['a client secret', `secret ${SECRET}`],
    ['a JWT', 'token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmb24ifQ.c2ln'],
    ['a bearer token', 'authorization: Bearer 0123456789abcdefXYZ'],
  ])('catches %s and never repeats it', (_what, text) => {
    checkLogLine(`{"msg":"${text}"}`);
    let message = '';
    try {
      assertNoLeaks();
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^the service logged what it must never log \(1 line\(s\)\)/);
    expect(message).not.toContain(text.split(' ').at(-1));
  });

  it('passes lines without them, and forgets what it reported', () => {
    checkLogLine('{"msg":"mail sent","messageId":"<1f2e@guard.example>"}');
    expect(assertNoLeaks).not.toThrow();
  });
});
