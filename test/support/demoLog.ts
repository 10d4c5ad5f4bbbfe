// The demo (scripts/demo.ts) runs the real service in its own process and writes the service's log to
// DEMO_DIR/service.log. After a run, the log guard reads that file, watching the demo's recipients and every
// address its emails name (MAIL_FROM, MAIL_TO and theirs), as it does for a service a test starts itself.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AddressObject, simpleParser } from 'mailparser';
import { RECIPIENTS } from '../../demo/story.js';
import { checkLogFile, watchLogFor } from './logGuard.js';

/** The demo's environment for a run under the guard: its service logs at debug. */
export const DEMO_LOG_ENV = { LOG_LEVEL: 'debug' };

export async function guardDemoLog(demoDir: string): Promise<void> {
  for (const { recipients } of RECIPIENTS) watchLogFor('a recipient address', ...recipients);
  const mailDir = join(demoDir, 'mail');
  for (const name of (await readdir(mailDir)).filter((file) => file.endsWith('.eml'))) {
    const mail = await simpleParser(await readFile(join(mailDir, name)));
    const named = [mail.from, mail.to].flat().filter((list): list is AddressObject => list !== undefined);
    watchLogFor(
      'an address the demo mails',
      ...named.flatMap((list) => list.value.map((a) => a.address ?? '')),
    );
  }
  const log = join(demoDir, 'service.log');
  const lines = await checkLogFile(log);
  // The guard read lines at debug level only if the service wrote some.
  if (!lines.some((line) => line.includes('"level":20'))) {
    throw new Error(`${log} has no debug line: the demo's service did not log at debug`);
  }
}
