// A mail relay for the benchmark: a real SMTP server (`smtp-server`) that accepts every message and drops it,
// as the OTLP sink drops spans. The sandbox's relay parses each message with `mailparser` and keeps it, which
// the tests need and the benchmark does not: in the benchmark's process, beside the publisher and the S/4HANA
// stand-in, it cost CPU and a heap that grows with every email, both taken from the machine the service is
// measured on.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SmtpSink {
  /** smtp://127.0.0.1:port */
  url: string;
  /** Messages accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

/** `pipelining: false` hides PIPELINING from EHLO, so that clients send each command and wait for its reply. */
export async function startSmtpSink(options: { pipelining?: boolean } = {}): Promise<SmtpSink> {
  let accepted = 0;
  const server = new SMTPServer({
    secure: false,
    hidePIPELINING: options.pipelining === false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    closeTimeout: 1000,
    onData(stream, _session, callback) {
      stream.resume();
      stream.once('end', () => {
        accepted += 1;
        callback(null, 'OK: dropped by the benchmark');
      });
    },
  });
  // A session that the stopped service leaves mid-way is no reason to end the run.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    accepted: () => accepted,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
