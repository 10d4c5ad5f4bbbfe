// Headless Chromium from the system's Debian package, driven by playwright-core (which downloads no browser).
// The flags keep it off the network it would otherwise call home to: on a closed network those connections are
// refused and slow every page down. A fresh profile per launch, removed at close.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'fon-chromium-'));
  // A persistent context is how playwright takes a --user-data-dir of one's own.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** A console page watched as its tests judge it: every URL it requested, every CSP violation it reported. */
export interface WatchedPage {
  page: Page;
  requested: Set<string>;
  cspViolations: string[];
}

/**
 * A page of the console at `serviceUrl` whose admin API calls carry `token()` as the approuter forwards the user's
 * token (none when it gives undefined), watched for what it requests and for CSP violations.
 */
export async function watchedConsolePage(
  browser: Browser,
  serviceUrl: string,
  token: () => string | undefined,
): Promise<WatchedPage> {
  const page = await browser.context.newPage();
  // Below the test's own timeout, so that a wait that fails names its locator.
  page.setDefaultTimeout(15_000);
  const requested = new Set<string>();
  const cspViolations: string[] = [];
  page.on('request', (request) => {
    if (request.url() !== 'about:blank') requested.add(request.url());
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  await browser.context.route(`${serviceUrl}/api/**`, (route) => {
    const bearer = token();
    return route.continue({
      headers: {
        ...route.request().headers(),
        ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
      },
    });
  });
  return { page, requested, cspViolations };
}

/** What the page requested outside the console's own files and the admin API at `serviceUrl`. */
export function requestedOutside(requested: Set<string>, serviceUrl: string): string[] {
  return [...requested].filter(
    (url) => !url.startsWith(`${serviceUrl}/console/`) && !url.startsWith(`${serviceUrl}/api/`),
  );
}
