import { describe, expect, it } from 'vitest';
import { smtpSettings } from '../../src/notifications/smtpSettings.js';

describe('SMTP_URL read as the relay’s settings', () => {
  it('keeps four connections, each for any number of messages, and upgrades by STARTTLS on 587 by default', () => {
    const { settings, problems } = smtpSettings('smtp://relay.example');
    expect(problems).toEqual([]);
    expect(settings).toMatchObject({
      host: 'relay.example',
      port: 587,
      secure: false,
      requireTLS: false,
      ignoreTLS: false,
      maxConnections: 4,
      maxMessages: Number.POSITIVE_INFINITY,
      socketTimeoutMs: 30_000,
      tls: { servername: 'relay.example' },
    });
    expect(settings?.auth).toBeUndefined();
  });

  it('speaks TLS from the first byte for smtps and for port 465, and logs on with the decoded user and password', () => {
    expect(smtpSettings('smtps://relay.example').settings).toMatchObject({ port: 465, secure: true });
    expect(smtpSettings('smtp://relay.example:465').settings).toMatchObject({ port: 465, secure: true });
    expect(smtpSettings('smtp://relay.example:465?secure=false').settings?.secure).toBe(false);
    expect(smtpSettings('smtps://me%40fleet.example:p%40ss%2Fword@relay.example').settings?.auth).toEqual({
      user: 'me@fleet.example',
      pass: 'p@ss/word',
    });
  });

  it('takes nodemailer’s query parameters: connections, messages a connection, pool=false, TLS and timeouts', () => {
    const { settings } = smtpSettings(
      'smtp://10.0.0.7:25?maxConnections=2&maxMessages=100&requireTLS=true&tls.rejectUnauthorized=false' +
        '&tls.servername=relay.example&name=notifier.example&socketTimeout=5000',
    );
    expect(settings).toMatchObject({
      maxConnections: 2,
      maxMessages: 100,
      requireTLS: true,
      name: 'notifier.example',
      socketTimeoutMs: 5000,
      tls: { rejectUnauthorized: false, servername: 'relay.example' },
    });
    expect(smtpSettings('smtp://10.0.0.7').settings?.tls).toEqual({});
    expect(smtpSettings('smtp://relay.example?pool=false').settings?.maxMessages).toBe(1);
  });

  it('names every parameter it cannot take instead of ignoring it', () => {
    expect(smtpSettings('smtp://relay.example?maxConnections=0&secure=yes&proxy=http://p').problems).toEqual([
      'SMTP_URL\'s maxConnections must be a number of at least 1, got "0"',
      'SMTP_URL\'s secure must be true or false, got "yes"',
      expect.stringMatching(/^SMTP_URL has the unknown parameter "proxy"; known are maxConnections, /),
    ]);
    expect(smtpSettings('http://relay.example').problems).toEqual([
      'SMTP_URL must start with smtp:// or smtps://, got http://',
    ]);
    expect(smtpSettings('relay.example:25').problems).toHaveLength(1);
  });
});
