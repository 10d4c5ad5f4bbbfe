import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/telemetry/logger.js';

const ADDRESS = 'fleet.buyer@customer.example';
const SECRET = 's3cr3t-value';

/** The lines the service's logger writes, parsed. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('the logger', () => {
  it('redacts credentials and addresses at the top of a line and one level below', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        to: [ADDRESS],
        from: ADDRESS,
        recipients: [ADDRESS],
        password: SECRET,
        secret: SECRET,
        mail: { to: ADDRESS, from: ADDRESS, recipients: [ADDRESS], subject: 'kept' },
        binding: { clientsecret: SECRET, token: SECRET, password: SECRET, secret: SECRET, url: 'kept' },
        headers: { authorization: SECRET, accept: 'kept' },
        req: { headers: { authorization: SECRET, host: 'kept' } },
        salesOrder: '4711',
      },
      'hello',
    );
    const line = JSON.stringify(lines);
    expect(line).not.toContain(ADDRESS);
    expect(line).not.toContain(SECRET);
    expect(lines[0]).toMatchObject({
      to: '[redacted]',
      recipients: '[redacted]',
      mail: { to: '[redacted]', subject: 'kept' },
      binding: { clientsecret: '[redacted]', token: '[redacted]', url: 'kept' },
      headers: { authorization: '[redacted]', accept: 'kept' },
      req: { headers: { authorization: '[redacted]', host: 'kept' } },
      salesOrder: '4711',
      msg: 'hello',
    });
  });

  it("redacts a child logger's bindings", () => {
    const { logger, lines } = capture();
    logger.child({ to: ADDRESS, relay: { password: SECRET } }).info('sent');
    expect(JSON.stringify(lines)).not.toMatch(new RegExp(`${ADDRESS}|${SECRET}`));
    expect(lines[0]).toMatchObject({ to: '[redacted]', relay: { password: '[redacted]' } });
  });

  it('leaves the logged object as it was', () => {
    const { logger } = capture();
    const fields = { to: ADDRESS, mail: { recipients: [ADDRESS] } };
    logger.info(fields, 'queued');
    expect(fields).toEqual({ to: ADDRESS, mail: { recipients: [ADDRESS] } });
  });
});
