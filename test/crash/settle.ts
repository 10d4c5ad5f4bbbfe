// The crash run's waits: a phase settled, and the first email of an order.
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { isIdle, queueCounts } from '../support/queueCounts.js';
import { pendingMail, unprocessedIdentities } from './checks.js';
import { pendingPushes } from './portalChecks.js';

/**
 * Waits until every given event is processed, the mail outbox is sent, every portal push is done or parked, and the queue holds nothing, ready or
 * unsettled. Returns what it was still waiting for, or nothing. Events that are not processed while the queue
 * is empty and no consumer holds anything can never be: they are reported lost at once, not at the timeout.
 */
export async function waitUntilSettled(
  pool: pg.Pool,
  queue: string,
  identities: string[],
  timeoutMs: number,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let waitingFor = '';
  let emptyWhileOpen = 0;
  let lastQueueCheck = 0;
  while (Date.now() < deadline) {
    try {
      const open = await unprocessedIdentities(pool, identities);
      const pending = await pendingMail(pool);
      if (open.length > 0) {
        waitingFor = `${open.length} unprocessed events`;
        // rabbitmqctl costs a second of CPU: ask it every other second only.
        if (Date.now() - lastQueueCheck > 2000) {
          lastQueueCheck = Date.now();
          const counts = await queueCounts(queue);
          emptyWhileOpen = isIdle(counts) ? emptyWhileOpen + 1 : 0;
          if (emptyWhileOpen >= 2) {
            return [`${open.length} events are not processed and the queue is empty with nothing in flight`];
          }
        }
      } else if (pending > 0) {
        waitingFor = `${pending} unsent emails`;
      } else if ((await pendingPushes(pool)) > 0) {
        waitingFor = 'pending portal pushes';
      } else {
        const counts = await queueCounts(queue);
        if (isIdle(counts)) return [];
        waitingFor = `the queue holding ${counts.ready} ready, ${counts.unacknowledged} unsettled`;
      }
    } catch (err) {
      waitingFor = `the database (${(err as Error).message})`;
    }
    await sleep(250);
  }
  return [`did not settle within ${timeoutMs} ms: still waiting for ${waitingFor}`];
}

/** Waits until the relay has an email of the order among `mails()`; false after `timeoutMs`. */
export async function firstMailOf(
  salesOrder: string,
  mails: () => Array<{ headers: Record<string, string | undefined> }>,
  timeoutMs = 10_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (mails().some((mail) => mail.headers['x-sales-order'] === salesOrder)) return true;
    await sleep(100);
  }
  return false;
}

/**
 * Waits until `check` finds nothing (the portal and the cases equal S/4HANA) and the repairs' emails and pushes
 * went out. Returns the last findings after `timeoutMs`, or nothing.
 */
export async function waitUntilRepaired(
  pool: pg.Pool,
  check: () => Promise<string[]>,
  timeoutMs: number,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let waitingFor: string[] = [];
  while (Date.now() < deadline) {
    try {
      waitingFor = await check();
      if (waitingFor.length === 0) {
        if ((await pendingMail(pool)) + (await pendingPushes(pool)) === 0) return [];
        waitingFor = ['unsent emails or pushes of repairs'];
      }
    } catch (err) {
      waitingFor = [`the database (${(err as Error).message})`];
    }
    await sleep(250);
  }
  return [`not repaired within ${timeoutMs} ms: ${waitingFor.length} differences, first ${waitingFor[0]}`];
}
