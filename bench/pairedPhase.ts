// What a setting costs the service per event, measured as a pair: two services, one without the setting and one
// with it, take the same load at the same time on two queues, and their CPU per event is compared over the same
// seconds, because this shared machine gives the same work more or less CPU time from one minute to the next.
// The load is either a backlog both drain as fast as they can, or events published to both at a steady rate. At a
// steady rate each side's batches are set by the arrivals, the same on both sides; draining, the slower side is
// the more contended and its batches differ, so the same pair moves more from one window to the next.
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestQueue } from '../test/support/broker.js';
import type { BenchDatabase } from './infrastructure.js';
import { commitTimes } from './probes.js';
import type { BenchPublisher } from './publisher.js';
import { startServiceProcess } from './serviceProcess.js';
import { type BenchEvent, markerEvent } from './workload.js';

export interface PairSide {
  queue: TestQueue;
  serviceEnv: Record<string, string>;
  logFile: string;
  warmup: BenchEvent[];
  /** New events, of orders the other side does not touch. */
  measured: BenchEvent[];
}

/** How the measured events reach the pair: all queued before the services start, or published to both steadily. */
export type PairLoad = { kind: 'drain' } | { kind: 'steady'; perSecond: number; seconds: number };

export interface PairResult {
  /** Service CPU per new event with the setting ÷ without, over the same seconds. */
  cpuRatio: number;
  /** Events each side committed in those seconds. */
  events: [number, number];
  seconds: number;
  /** The higher peak RSS of the two services. */
  peakRssMb: number;
  /** False when either side ran into the time limit; the ratio then covers what both had done by then. */
  complete: boolean;
}

export async function pairedPhase(
  context: { db: BenchDatabase; publisher: BenchPublisher; nodeArgs: string[]; timeoutMs: number },
  load: PairLoad,
  without: PairSide,
  withSetting: PairSide,
): Promise<PairResult> {
  const sides = [without, withSetting].map((side) => ({ ...side, marker: markerEvent() }));
  for (const side of sides) {
    const queued = [...side.warmup, side.marker, ...(load.kind === 'drain' ? side.measured : [])];
    await context.publisher.publish(side.queue.address, queued);
  }
  const services = await Promise.all(
    sides.map((side) =>
      startServiceProcess({ env: side.serviceEnv, logFile: side.logFile, nodeArgs: context.nodeArgs }),
    ),
  );
  const ids = sides.map((side) => [side.marker.id, ...side.measured.map((event) => event.id)]);
  const all = ids.flat();
  let times = new Map<string, number>();
  let peakRssBytes = 0;
  let steadyFrom = 0;
  const deadline = Date.now() + context.timeoutMs;
  /** The commit times of `wanted`, once all are committed or the deadline has passed. */
  const commitsOf = async (wanted: string[]) => {
    let found = new Map<string, number>();
    while (Date.now() < deadline) {
      found = await commitTimes(context.db, wanted);
      if (found.size === wanted.length) break;
      await sleep(100);
    }
    return found;
  };
  try {
    if (load.kind === 'steady') {
      await commitsOf(sides.map((side) => side.marker.id));
      steadyFrom = Date.now();
      await Promise.all(
        sides.map((side) =>
          context.publisher.publishSteadily(side.queue.address, side.measured, load.perSecond),
        ),
      );
    }
    times = await commitsOf(all);
  } finally {
    const stopped = await Promise.all(services.map((service) => service.stop()));
    peakRssBytes = Math.max(...stopped.map((s) => s.peakRssBytes));
    await sleep(600);
    await Promise.all(sides.map((side) => side.queue.purge()));
  }
  const windows = ids.map(([marker, ...measured]) => ({
    start: times.get(marker as string) ?? Number.NaN,
    end: Math.max(...measured.map((id) => times.get(id) ?? Number.NEGATIVE_INFINITY)),
  }));
  // Draining: from the later marker to the earlier last commit, so that both were busy throughout. Steady: from
  // the first event published to the later last commit, so that each side's window holds all its events.
  const from = load.kind === 'steady' ? steadyFrom : Math.max(...windows.map((w) => w.start));
  const to = (load.kind === 'steady' ? Math.max : Math.min)(...windows.map((w) => w.end));
  if (!(to > from)) throw new Error(`the paired services never ran at the same time; see ${without.logFile}`);
  const within = (id: string) => {
    const at = times.get(id);
    return at !== undefined && at >= from && at <= to;
  };
  const committed = ids.map(([, ...measured]) => measured.filter(within).length) as [number, number];
  const perEvent = services.map(
    (service, i) => service.cpu.between('service', from, to) / committed[i as 0 | 1],
  );
  return {
    cpuRatio: (perEvent[1] as number) / (perEvent[0] as number),
    events: committed,
    seconds: (to - from) / 1000,
    peakRssMb: peakRssBytes / 2 ** 20,
    complete: times.size === all.length,
  };
}
