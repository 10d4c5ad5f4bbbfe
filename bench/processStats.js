import { readFileSync } from 'node:fs';

// USER_HZ: the unit of utime/stime in /proc/<pid>/stat. 100 on every Linux build Node supports (x86-64,
// arm64); `getconf CLK_TCK` prints it.
const TICKS_PER_SECOND = 100;
/** User + system CPU seconds the process (all its threads: main, libuv pool, GC) has used so far. */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces and parentheses: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / TICKS_PER_SECOND;
}
/** Peak resident set size (VmHWM) in bytes: the most memory the process has held at any time. */
export function peakRssBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  if (match === null) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}
/** CPU seconds this process has used so far. */
export function ownCpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
/**
 * Samples cumulative CPU counters every `everyMs`, so that the CPU spent in a window known only afterwards (from
 * commit timestamps in the database) can be read off. At 25 ms the error at each edge is a few milliseconds of
 * CPU, well under 1 % of a phase of several seconds. A source that stops answering (its process exited) keeps
 * its last value.
 */
export function sampleCpu(sources, everyMs = 25) {
  const names = Object.keys(sources);
  const samples = [];
  const take = () => {
    const cpu = {};
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
  const at = (name, ms) => {
    const value = (i) => samples[i].cpu[name];
    if (ms <= (samples[0]?.at ?? 0)) return value(0);
    for (let i = 1; i < samples.length; i++) {
      const right = samples[i].at;
      if (right >= ms) {
        const left = samples[i - 1].at;
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
export function watchExit(child) {
  let exitCode;
  const exited = new Promise((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  return { exited, code: () => exitCode };
}
