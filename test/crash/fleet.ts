// Several instances of the compiled service as separate OS processes, consuming the same queue: started,
// killed with SIGKILL, restarted like a platform would, stopped with SIGTERM at the end. Every process's
// JSON log goes to a file of its own, is tallied and passes the log guard on the way.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { onTestFinished } from 'vitest';
import { assertNoLeaks, checkLogLine, watchServiceEnv } from '../support/logGuard.js';
import type { FailedPush } from './portalChecks.js';

export interface LogTally {
  /** Events whose effect a delivery committed (applied, stale, not found, ignored). */
  processed: number;
  /** Deliveries found already processed. */
  duplicates: number;
  released: number;
  rejected: number;
  /** A refused message that came again and was taken, its dead letter standing: its broker copy is gone. */
  alreadyRefused: number;
  /** Why deliveries were released, by the first words of the reason. */
  releaseReasons: Record<string, number>;
  amqpReconnects: number;
  mailSent: number;
  /** "mail sent" lines per Message-ID: the service logs one after recording a send. */
  mailSentById: Map<string, number>;
  mailRetried: number;
  mailParked: number;
  /** A mail went out but the service could not record it (e.g. the database was down). */
  mailBookkeepingFailed: number;
  /** Every "portal push failed, will retry" line: which try of which push the client saw fail, and why. */
  failedPushes: FailedPush[];
  /** fatal lines: uncaught exceptions, unhandled rejections, failed starts. */
  fatal: string[];
}

export interface Exit {
  slot: string;
  pid: number;
  at: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last fatal log line of the process, if any. */
  why: string | undefined;
}

export interface StopReport {
  slot: string;
  ms: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Did not exit within the budget and was killed. */
  stuck: boolean;
}

export interface Fleet {
  readonly slots: readonly string[];
  /** Starts every slot and waits until each has its receiver attached. */
  start(): Promise<void>;
  /** SIGKILL; resolves once the process is gone. Returns false when the slot had no process. */
  kill(slot: string): Promise<boolean>;
  /** Starts the slot again; resolves when its receiver is attached, or when it exits first. */
  restart(slot: string): Promise<void>;
  isUp(slot: string): boolean;
  /** A process runs in the slot, attached or not (yet). */
  isRunning(slot: string): boolean;
  pids(): number[];
  /** The slot whose process has this pid. */
  slotOf(pid: number): string | undefined;
  /** Resolves once every slot runs a process whose receiver is attached. */
  allReady(timeoutMs: number): Promise<void>;
  /** SIGTERM to every process at once; a process that outlives `budgetMs` is killed and reported stuck. */
  stopAll(budgetMs: number): Promise<StopReport[]>;
  /** Kills whatever still runs (cleanup). */
  close(): Promise<void>;
  readonly tally: LogTally;
  readonly kills: Array<{ slot: string; pid: number; at: number }>;
  /** Exits the fleet did not cause; the fleet restarts the slot after a second, as a platform would. */
  readonly unplannedExits: Exit[];
}

interface Running {
  child: ChildProcess;
  ready: boolean;
  readyWaiters: Array<() => void>;
  exited: Promise<void>;
  lastFatal: string | undefined;
  log: WriteStream;
}

export function createFleet(options: {
  mainJs: string;
  env: Record<string, string>;
  /** Settings of one slot on top of `env`, by slot name (i1, i2, …). */
  slotEnv?: Record<string, Record<string, string>>;
  logDir: string;
  count: number;
}): Fleet {
  // No instance may log an address or a credential: the test fails with the line, whatever else it checks.
  watchServiceEnv(options.env);
  onTestFinished(assertNoLeaks);
  const slots = Array.from({ length: options.count }, (_, i) => `i${i + 1}`);
  const running = new Map<string, Running>();
  const incarnation = new Map<string, number>();
  const intended = new WeakSet<ChildProcess>();
  const restartTimers = new Set<NodeJS.Timeout>();
  let closing = false;
  const tally: LogTally = {
    processed: 0,
    duplicates: 0,
    released: 0,
    rejected: 0,
    alreadyRefused: 0,
    releaseReasons: {},
    amqpReconnects: 0,
    mailSent: 0,
    mailSentById: new Map(),
    mailRetried: 0,
    mailParked: 0,
    mailBookkeepingFailed: 0,
    failedPushes: [],
    fatal: [],
  };
  const kills: Fleet['kills'] = [];
  const unplannedExits: Exit[] = [];

  function count(line: string, current: Running): void {
    let entry: {
      level?: number;
      msg?: string;
      reason?: string;
      messageId?: string;
      pushId?: string;
      attempts?: number;
      err?: { message?: string };
    };
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    switch (entry.msg) {
      case 'event processed':
        tally.processed++;
        break;
      case 'duplicate event skipped':
        tally.duplicates++;
        break;
      case 'event released for redelivery': {
        tally.released++;
        const kind = releaseKind(entry.reason ?? 'unknown');
        tally.releaseReasons[kind] = (tally.releaseReasons[kind] ?? 0) + 1;
        break;
      }
      case 'message handling failed unexpectedly; releasing it':
        tally.released++;
        tally.releaseReasons['handling failed'] = (tally.releaseReasons['handling failed'] ?? 0) + 1;
        break;
      case 'event rejected':
        tally.rejected++;
        break;
      case 'message refused before arrived again; taken, its dead letter stands':
        tally.alreadyRefused++;
        break;
      case 'AMQP disconnected; reconnecting':
        tally.amqpReconnects++;
        break;
      case 'mail sent': {
        tally.mailSent++;
        const id = entry.messageId ?? '';
        tally.mailSentById.set(id, (tally.mailSentById.get(id) ?? 0) + 1);
        break;
      }
      case 'portal push failed, will retry':
        tally.failedPushes.push({
          pid: current.child.pid ?? 0,
          pushId: entry.pushId ?? '',
          attempts: entry.attempts ?? 0,
          reason: entry.reason ?? '',
        });
        break;
      case 'mail send failed, will retry':
        tally.mailRetried++;
        break;
      case 'mail parked':
        tally.mailParked++;
        break;
      case 'mail bookkeeping failed':
      case 'mail sent but not recorded; it goes again when its lease runs out':
        tally.mailBookkeepingFailed++;
        break;
      case 'AMQP receiver attached':
        if (!current.ready) {
          current.ready = true;
          for (const resolve of current.readyWaiters.splice(0)) resolve();
        }
        break;
    }
    if ((entry.level ?? 0) >= 60) {
      current.lastFatal = `${entry.msg}${entry.err?.message ? `: ${entry.err.message}` : ''}`;
      tally.fatal.push(current.lastFatal);
    }
  }

  function spawnSlot(slot: string): Running {
    const n = (incarnation.get(slot) ?? 0) + 1;
    incarnation.set(slot, n);
    const log = createWriteStream(join(options.logDir, `${slot}.${n}.log`));
    const child = spawn(process.execPath, [options.mainJs], {
      env: { ...options.env, ...options.slotEnv?.[slot], PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let exitedResolve: () => void = () => {};
    const current: Running = {
      child,
      ready: false,
      readyWaiters: [],
      exited: new Promise<void>((resolve) => {
        exitedResolve = resolve;
      }),
      lastFatal: undefined,
      log,
    };
    // Both streams by whole lines, through the guard: a value split across two chunks would slip past it.
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      checkLogLine(line);
      log.write(`${line}\n`);
      count(line, current);
    });
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
      checkLogLine(line);
      log.write(`${line}\n`);
    });
    child.on('exit', (code, signal) => {
      if (running.get(slot) === current) running.delete(slot);
      for (const resolve of current.readyWaiters.splice(0)) resolve();
      // Lines still buffered in the pipe are lost with a SIGKILL anyway; end the file after they drain.
      setTimeout(() => log.end(), 200);
      exitedResolve();
      if (intended.has(child) || closing) return;
      unplannedExits.push({
        slot,
        pid: child.pid ?? 0,
        at: Date.now(),
        code,
        signal,
        why: current.lastFatal,
      });
      const timer = setTimeout(() => {
        restartTimers.delete(timer);
        if (!closing && !running.has(slot)) running.set(slot, spawnSlot(slot));
      }, 1000);
      restartTimers.add(timer);
    });
    return current;
  }

  function whenReady(current: Running): Promise<void> {
    if (current.ready) return Promise.resolve();
    return new Promise((resolve) => current.readyWaiters.push(resolve));
  }

  // If the test process ends without close() (a timeout, an interrupt), no instance may outlive it.
  const killAll = () => {
    for (const current of running.values()) current.child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  return {
    slots,
    tally,
    kills,
    unplannedExits,
    async start() {
      for (const slot of slots) running.set(slot, spawnSlot(slot));
      await this.allReady(60_000);
    },
    async kill(slot) {
      const current = running.get(slot);
      if (current === undefined || intended.has(current.child)) return false;
      intended.add(current.child);
      kills.push({ slot, pid: current.child.pid ?? 0, at: Date.now() });
      current.child.kill('SIGKILL');
      await current.exited;
      return true;
    },
    async restart(slot) {
      if (running.has(slot) || closing) return;
      const current = spawnSlot(slot);
      running.set(slot, current);
      await whenReady(current);
    },
    isUp: (slot) => running.get(slot)?.ready === true,
    isRunning: (slot) => running.has(slot),
    pids: () => [...running.values()].map((r) => r.child.pid ?? 0).filter((pid) => pid > 0),
    slotOf: (pid) => [...running.entries()].find(([, r]) => r.child.pid === pid)?.[0],
    async allReady(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!slots.every((slot) => running.get(slot)?.ready === true)) {
        if (Date.now() > deadline) {
          const down = slots.filter((slot) => running.get(slot)?.ready !== true);
          throw new Error(`instances ${down.join(', ')} did not attach within ${timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stopAll(budgetMs) {
      closing = true;
      for (const timer of restartTimers) clearTimeout(timer);
      return Promise.all(
        [...running.entries()].map(async ([slot, current]) => {
          intended.add(current.child);
          const started = Date.now();
          let stuck = false;
          const timer = setTimeout(() => {
            stuck = true;
            current.child.kill('SIGKILL');
          }, budgetMs);
          current.child.kill('SIGTERM');
          await current.exited;
          clearTimeout(timer);
          const { exitCode: code, signalCode: signal } = current.child;
          return { slot, ms: Date.now() - started, code, signal, stuck };
        }),
      );
    },
    async close() {
      closing = true;
      process.off('exit', killAll);
      for (const timer of restartTimers) clearTimeout(timer);
      await Promise.all(
        [...running.values()].map((current) => {
          intended.add(current.child);
          current.child.kill('SIGKILL');
          return current.exited;
        }),
      );
    },
  };
}

/** Which dependency a release reason points at, for the summary. */
function releaseKind(reason: string): string {
  if (/S\/4HANA|AxiosError|status code|timeout of \d+ms|ECONNABORTED/.test(reason)) return 'S/4HANA';
  if (/ECONNREFUSED|database|Connection terminated|terminating connection/.test(reason)) return 'database';
  return reason.slice(0, 40);
}
