// What a credit window costs after a crash: the service drains a small backlog, is killed (SIGKILL) half-way and
// started again. The messages the broker delivers twice are exactly those it had delivered and not yet seen
// settled at the kill; the broker counts them as unacknowledged. The process is frozen (SIGSTOP) first, so that
// the count read then is the count at the kill: a frozen process settles nothing more, and the broker sends no
// more than the credit it has granted.
import { setTimeout as sleep } from 'node:timers/promises';
import { queueCounts } from '../test/support/queueCounts.js';
import type { BenchDatabase } from './infrastructure.js';
import { checkRecorded, type PhaseContext, waitFor } from './phases.js';
import type { CrashRun } from './results.js';
import type { ServiceProcess } from './serviceProcess.js';
import type { BenchEvent } from './workload.js';

/** Messages the broker holds delivered and unsettled, once two reads a moment apart agree. */
async function heldWhenStill(queueName: string): Promise<number> {
  let last = -1;
  for (;;) {
    const { unacknowledged } = await queueCounts(queueName);
    if (unacknowledged === last) return unacknowledged;
    last = unacknowledged;
    await sleep(300);
  }
}

async function count(db: BenchDatabase, table: 'processed_event' | 'duplicate_arrival'): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`select count(*)::int as "n" from ${table}`);
  return rows[0]?.n ?? 0;
}

export async function crashPhase(
  ctx: PhaseContext,
  service: { start(): Promise<ServiceProcess>; logFile: string; window: string },
  events: BenchEvent[],
): Promise<CrashRun> {
  const { db, queue } = ctx;
  await ctx.publisher.publish(queue.address, events);
  const first = await service.start();
  let redelivered: number;
  let recordedAtKill: number;
  try {
    await waitFor(async () => (await count(db, 'processed_event')) >= events.length / 2, ctx.timeoutMs);
    process.kill(first.pid, 'SIGSTOP');
    redelivered = await heldWhenStill(queue.name);
    recordedAtKill = await count(db, 'processed_event');
    await first.kill();
  } finally {
    await first.stop();
  }
  const second = await service.start();
  try {
    const done = await waitFor(
      async () => (await count(db, 'processed_event')) >= events.length && (await queue.isIdle()),
      ctx.timeoutMs,
    );
    if (!done) throw new Error(`the queue was not drained after the restart; see ${service.logFile}`);
  } finally {
    await second.stop();
    await sleep(600);
    await queue.purge();
  }
  const ids = events.map((event) => event.id);
  await checkRecorded(db, 'processed_event', ids, ids.length, service.logFile);
  return {
    window: service.window,
    events: events.length,
    recordedAtKill,
    redelivered,
    // A redelivery of an event committed before the kill is a duplicate; the others are done after the restart.
    redeliveredAfterCommit: await count(db, 'duplicate_arrival'),
  };
}
