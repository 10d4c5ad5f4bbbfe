// The plain consumer (consumer.ts) as a process of its own, compiled and run like the service and measured from
// the outside like it.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEPLOYED_NODE_FLAGS } from '../../scripts/startCommand.js';
import { type CpuSampler, cpuSeconds, peakRssBytes, sampleCpu, watchExit } from '../processStats.js';
import { PLAIN_PREFETCH } from './consumer.js';

const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const PROJECT = fileURLToPath(new URL('./tsconfig.json', import.meta.url));
/** Where the compiled consumer lands (bench/plain/tsconfig.json). */
export const PLAIN_ENTRY = fileURLToPath(new URL('../../dist/plain/consumer.js', import.meta.url));

/** Compiles the plain consumer into dist/plain/, as `npm run build` compiles the service. */
export function buildPlainConsumer(): void {
  rmSync(fileURLToPath(new URL('../../dist/plain/', import.meta.url)), { recursive: true, force: true });
  execFileSync(process.execPath, [TSC, '-p', PROJECT], { stdio: 'inherit' });
}

/** What the benchmark needs of either consumer: its CPU, when it takes messages, and its peak memory. */
export interface ConsumerProcess {
  cpu: CpuSampler<'service'>;
  ready(timeoutMs?: number): Promise<void>;
  stop(): Promise<{ peakRssBytes: number }>;
}

export function startPlainProcess(options: {
  databaseUrl: string;
  s4Url: string;
  smtpUrl: string;
  queue: string;
  amqpHost: string;
  amqpPort: number;
  logFile: string;
}): ConsumerProcess {
  const child: ChildProcess = spawn(
    process.execPath,
    // The service's heap flags, the compiled consumer (buildPlainConsumer).
    [
      ...DEPLOYED_NODE_FLAGS,
      PLAIN_ENTRY,
      ...[
        '--database-url',
        options.databaseUrl,
        '--s4-url',
        options.s4Url,
        '--smtp-url',
        options.smtpUrl,
        '--queue',
        options.queue,
      ],
      ...['--amqp-host', options.amqpHost, '--amqp-port', String(options.amqpPort)],
      ...['--prefetch', String(PLAIN_PREFETCH)],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('the plain consumer did not start');
  const log = createWriteStream(options.logFile, { flags: 'a' });
  child.stderr?.pipe(log);
  let attached = false;
  child.stdout?.on('data', (chunk: Buffer) => {
    log.write(chunk);
    if (chunk.toString('utf8').includes('attached')) attached = true;
  });
  const { exited, code: exitCode } = watchExit(child);
  const cpu = sampleCpu({ service: () => cpuSeconds(pid) });
  return {
    cpu,
    async ready(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!attached) {
        if (exitCode() !== undefined) throw new Error(`the plain consumer exited; see ${options.logFile}`);
        if (Date.now() > deadline)
          throw new Error(`the plain consumer did not attach; see ${options.logFile}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      const peak = exitCode() === undefined ? peakRssBytes(pid) : 0;
      if (exitCode() === undefined) {
        child.kill('SIGTERM');
        const killed = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killed);
      }
      cpu.stop();
      log.end();
      return { peakRssBytes: peak };
    },
  };
}
