// CPU time and peak memory of another process, read from /proc (Linux). Reading from the outside keeps the
// measurement out of the measured process: the service needs no code for it, and the load generator's own
// work (publishing, the S/4HANA and SMTP stand-ins) is never counted against the service.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

// USER_HZ: the unit of utime/stime in /proc/<pid>/stat. 100 on every Linux build Node supports (x86-64,
// arm64); `getconf CLK_TCK` prints it.
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds the process (all its threads: main, libuv pool, GC) has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces and parentheses: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / TICKS_PER_SECOND;
}

/**
 * CPU seconds every process on the machine has used so far, the consumer, PostgreSQL, RabbitMQ and the bench's
 * own stand-ins alike: /proc/stat's busy time (user, nice, system, irq, softirq, steal) over all cores.
 */
export function machineCpuSeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').slice(0, 200).split('\n')[0] as string;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (
    ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) /
    TICKS_PER_SECOND
  );
}

/** Peak resident set size (VmHWM) in bytes: the most memory the process has held at any time. */
export function peakRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  if (match === null) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** CPU seconds this process has used so far. */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

export interface CpuSampler<Name extends string> {
  /**
   * CPU seconds `name` used between two wall-clock instants (ms since the epoch), interpolated between samples;
   * NaN when that source could not be read.
   */
  between(name: Name, fromMs: number, toMs: number): number;
  stop(): void;
}

/**
 * Samples cumulative CPU counters every `everyMs`, so that the CPU spent in a window known only afterwards (from
 * commit timestamps in the database) can be read off. At 25 ms the error at each edge is a few milliseconds of
 * CPU, well under 1 % of a phase of several seconds. A source that stops answering (its process exited) keeps
 * its last value.
 */
export function sampleCpu<Name extends string>(
  sources: Record<Name, () => number>,
  everyMs = 25,
): CpuSampler<Name> {
  const names = Object.keys(sources) as Name[];
  const samples: Array<{ at: number; cpu: Record<string, number> }> = [];
  const take = () => {
    const cpu: Record<string, number> = {};
    for (const name of names) {
      try {
        cpu[name] = sources[name]();
      } catch {
        cpu[name] = samples[samples.length - 1]?.cpu[name] ?? Number.NaN;
      }
    }
    samples.push({ at: Date.now(), cpu });
  };
  const timer = setInterval(take, everyMs);
  take();
  const at = (name: Name, ms: number): number => {
    const value = (i: number) => (samples[i] as { cpu: Record<string, number> }).cpu[name] as number;
    if (ms <= (samples[0]?.at ?? 0)) return value(0);
    for (let i = 1; i < samples.length; i++) {
      const right = (samples[i] as { at: number }).at;
      if (right >= ms) {
        const left = (samples[i - 1] as { at: number }).at;
        const share = right === left ? 1 : (ms - left) / (right - left);
        return value(i - 1) + share * (value(i) - value(i - 1));
      }
    }
    return value(samples.length - 1);
  };
  return {
    between: (name, fromMs, toMs) => at(name, toMs) - at(name, fromMs),
    stop: () => {
      take();
      clearInterval(timer);
    },
  };
}

/** A child's exit as it happens: `code()` is undefined while it runs; `exited` resolves once it is gone. */
export function watchExit(child: ChildProcess): { exited: Promise<void>; code(): number | null | undefined } {
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  return { exited, code: () => exitCode };
}
