// The service as its own process, started the way the platform starts it (src/main.ts, through tsx), with its
// log kept for diagnosis and read by the log guard: for tests about the process itself, whether it dies or stays
// up, or is killed for real.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { checkLogLine, watchServiceEnv } from './logGuard.js';
import { eventually } from './waits.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  /** stdout's JSON lines and stderr's lines, as they came. */
  log: string[];
  exited: Promise<unknown>;
  /** Still running: neither exited nor killed by a signal. */
  alive(): boolean;
  /** Where its HTTP server listens (it is given PORT 0), once it does and, with AMQP, its receiver attached. */
  ready: Promise<string>;
}

/**
 * Starts src/main.ts with exactly `env` (and PATH), at LOG_LEVEL=debug whatever `env` says, so that the guard
 * reads every line the service can write.
 */
export function spawnServiceProcess(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, ...env, LOG_LEVEL: 'debug' },
  });
  const log: string[] = [];
  watchServiceEnv(env);
  // Whole lines, of both streams: a value split across two chunks would slip past the guard.
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream as NodeJS.ReadableStream }).on('line', (line) => {
      checkLogLine(line);
      if (line !== '') log.push(line);
    });
  }
  const alive = () => child.exitCode === null && child.signalCode === null;
  const withAmqp = env.INGEST?.includes('amqp') === true;
  const ready = eventually(
    'the process to start',
    async () => {
      // The log first: a process that started and attached is ready even if it has died since (a poison
      // message may kill it within milliseconds of the attach, before this poll looks).
      const started = log.find((line) => line.includes('"msg":"fleet order notifier started"'));
      const attached = !withAmqp || log.some((line) => line.includes('"msg":"AMQP receiver attached"'));
      if (started !== undefined && attached) return (JSON.parse(started) as { url: string }).url;
      if (!alive()) throw new Error(`exited with ${child.exitCode}: ${log.slice(-5).join('\n')}`);
      return undefined;
    },
    30_000,
  );
  // A test of a process that must not get ready never awaits this: its timeout, later, is no failure of the run.
  ready.catch(() => undefined);
  return { child, log, exited: once(child, 'exit'), alive, ready };
}
