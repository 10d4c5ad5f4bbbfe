// `npm run demo -- --serve` as someone trying the service runs it: the story, then the embedded stack stays up.
// From the outside only: the printed URLs, the sandbox's order endpoint, the webhook, the .eml files, Ctrl-C.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_LOG_ENV, guardDemoLog } from '../support/demoLog.js';
import { eventually } from '../support/waits.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START_TIMEOUT_MS = 120_000;

let demoDir: string;
let child: ChildProcess;
let stdout = '';
let exited: Promise<number | null>;

/** The first URL printed after `label`, e.g. the webhook after "POST". */
function printedUrl(pattern: RegExp): string {
  const url = pattern.exec(stdout)?.[1];
  if (url === undefined) throw new Error(`not printed: ${pattern}\n${stdout}`);
  return url;
}

async function mailFiles(): Promise<string[]> {
  return (await readdir(join(demoDir, 'mail'))).filter((name) => name.endsWith('.eml'));
}

function announce(webhook: string, salesOrder: string, id: string): Promise<Response> {
  // Binary mode, exactly as the printed curl example sends it.
  return fetch(webhook, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-type': 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1',
      'ce-source': '/default/sap.s4.beh/244572008',
      'ce-id': id,
    },
    body: JSON.stringify({ SalesOrder: salesOrder }),
  });
}

beforeAll(async () => {
  demoDir = await mkdtemp(join(tmpdir(), 'fon-serve-'));
  child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--serve'], {
    cwd: ROOT,
    env: { ...process.env, DEMO_DIR: demoDir, ...DEMO_LOG_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  exited = new Promise((resolve) => child.on('close', resolve));
  await eventually(
    'the local mode to print how to use it',
    async () => {
      if (child.exitCode !== null)
        throw new Error(`the demo exited ${child.exitCode}:\n${stdout}\n${stderr}`);
      return stdout.includes('-d \'{"SalesOrder":');
    },
    START_TIMEOUT_MS,
  );
}, START_TIMEOUT_MS + 5000);

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  try {
    // Every line the service wrote, the story's and the tests' own events', passes the log guard.
    await guardDemoLog(demoDir);
  } finally {
    await rm(demoDir, { recursive: true, force: true });
  }
});

describe('npm run demo -- --serve', () => {
  it("prints the console's URL, which serves the page and, without login, the admin API that grants every action", async () => {
    const consoleUrl = printedUrl(/console +(http:\/\/127\.0\.0\.1:\d+\/console\/)/);
    const page = await fetch(consoleUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="console.js"></script>');
    const me = await fetch(new URL('/api/me', consoleUrl));
    expect(await me.json()).toEqual({ scopes: ['Viewer', 'Admin'] });
  });

  it('stays up after the story: an event, an order change in the sandbox and a second event give a second email, and Ctrl-C stops it cleanly', async () => {
    expect(stdout).toContain('Demo OK');
    const webhook = printedUrl(/POST (http:\/\/127\.0\.0\.1:\d+\/events)/);
    const orderUrl = printedUrl(/curl -X PATCH (http:\/\/127\.0\.0\.1:\d+\/orders\/\d+)/);
    const salesOrder = orderUrl.split('/').pop() as string;
    const before = new Set(await mailFiles());

    // The sandbox holds the order's state as the story left it; the first event finds no change to mail.
    const shown = await fetch(orderUrl);
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({ salesOrder });
    const first = await announce(webhook, salesOrder, 'local-mode-1');
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ status: 'processed', result: 'applied' });

    const changed = await fetch(orderUrl, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ requestedDeliveryDate: '2027-03-01' }),
    });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ salesOrder, requestedDeliveryDate: '2027-03-01' });
    const second = await announce(webhook, salesOrder, 'local-mode-2');
    expect(await second.json()).toEqual({ status: 'processed', result: 'applied' });

    // Every email written since the story ended: exactly the one about the moved date (the first event changed
    // nothing worth an email). Read by header, not by file order.
    const added = await eventually('the email about the moved date', async () => {
      const mails = await Promise.all(
        (await mailFiles())
          .filter((name) => !before.has(name))
          .map(async (name) => simpleParser(await readFile(join(demoDir, 'mail', name)))),
      );
      return mails.some((mail) => mail.headers.get('x-requested-delivery-date') === '2027-03-01')
        ? mails
        : undefined;
    });
    expect(
      added.map((mail) => [
        mail.headers.get('x-sales-order'),
        mail.headers.get('x-requested-delivery-date'),
        mail.subject,
      ]),
    ).toEqual([[salesOrder, '2027-03-01', expect.stringContaining('delivery date moved to 1 Mar 2027')]]);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stdout).toContain('stopping');
  });
});
