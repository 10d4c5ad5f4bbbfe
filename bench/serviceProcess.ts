// The service under test as a process of its own (`node dist/main.js`), started with the node flags and
// configured through the environment exactly as in production, so that its CPU time and memory are measured
// apart from the load generator.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEPLOYED_NODE_FLAGS } from '../scripts/startCommand.js';
import { type CpuSampler, cpuSeconds, peakRssBytes, sampleCpu, watchExit } from './processStats.js';

export const SERVICE_ENTRY = new URL('../dist/main.js', import.meta.url).pathname;

export interface ServiceProcess {
  pid: number;
  cpu: CpuSampler<'service'>;
  /** Resolves when /health reports ready with the AMQP receiver attached. */
  ready(timeoutMs?: number): Promise<void>;
  /** Reads the peak RSS, then stops the process with SIGTERM (SIGKILL after 10 s) and waits for its exit. */
  stop(): Promise<{ peakRssBytes: number; exitCode: number | null }>;
  /** SIGKILL, as a crash; resolves when the process is gone. */
  kill(): Promise<void>;
}

export interface ServiceProcessOptions {
  env: Record<string, string>;
  /** Where the service's stdout and stderr (its JSON log) go. */
  logFile: string;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
  /** The cores the service may run on (taskset's list, e.g. "1"); any by default. */
  cpus?: string;
}

export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  if (!existsSync(SERVICE_ENTRY)) throw new Error(`${SERVICE_ENTRY} is missing: run npm run build first`);
  const port = await freePort();
  const log = openSync(options.logFile, 'a');
  // The deployed heap ceiling, so that the peak RSS is the deployment's.
  const node = [process.execPath, ...DEPLOYED_NODE_FLAGS, ...(options.nodeArgs ?? []), SERVICE_ENTRY];
  const [command, ...args] = options.cpus === undefined ? node : ['taskset', '-c', options.cpus, ...node];
  const child: ChildProcess = spawn(command as string, args, {
    env: { PATH: process.env.PATH ?? '', ...options.env, PORT: String(port) },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error('the service process did not start');
  const { exited, code: exitCode } = watchExit(child);
  const cpu = sampleCpu({ service: () => cpuSeconds(pid) });

  return {
    pid,
    cpu,
    async ready(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (exitCode() !== undefined) {
          throw new Error(
            `the service exited with code ${exitCode()} while starting; see ${options.logFile}`,
          );
        }
        try {
          const response = await fetch(`http://127.0.0.1:${port}/health`);
          const health = (await response.json()) as { ready?: boolean; checks?: { amqp?: string } };
          if (health.ready === true && health.checks?.amqp === 'attached') return;
        } catch {
          // not listening yet
        }
        await sleep(50);
      }
      throw new Error(`the service was not ready within ${timeoutMs} ms; see ${options.logFile}`);
    },
    async stop() {
      let peak = 0;
      if (exitCode() === undefined) {
        peak = peakRssBytes(pid);
        child.kill('SIGTERM');
        const killed = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killed);
      }
      cpu.stop();
      return { peakRssBytes: peak, exitCode: exitCode() ?? null };
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}
