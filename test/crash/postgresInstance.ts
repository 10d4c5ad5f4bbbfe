// A PostgreSQL server of the suite's own (initdb into a temporary directory, its own port), so that the
// suite can crash and restart it without touching the shared cluster other test runs use.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';

export interface PostgresInstance {
  url: string;
  port: number;
  /** Stops the server the hard way (as a crash would) and starts it again after `downMs`. */
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** initdb refuses to run as root: as root, the server runs as the `postgres` OS user. */
export async function startPostgresInstance(): Promise<PostgresInstance> {
  const bin = findBinaries();
  const dir = await mkdtemp(join(tmpdir(), 'fon-crash-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']).catch(() => {
      throw new Error('running as root needs the OS user "postgres" to own the suite\'s PostgreSQL server');
    });
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args);

  const data = join(dir, 'data');
  const port = await freePort();
  await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  // fsync=off: the faults here are process crashes, not machine crashes, and the disk is slow.
  const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=200`;
  const start = () =>
    pg('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', serverOptions, 'start']);
  const stopNow = () => pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  await start();
  // If the test process ends without stop() (a timeout, an interrupt), the server must not outlive it.
  const stopAtExit = () => {
    const args = ['-D', data, '-m', 'immediate', 'stop'];
    const command = asRoot
      ? ['runuser', '-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args]
      : [join(bin, 'pg_ctl'), ...args];
    try {
      execFileSync(command[0] as string, command.slice(1), { stdio: 'ignore' });
    } catch {
      // Not running any more: nothing to stop.
    }
  };
  process.once('exit', stopAtExit);

  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart(downMs) {
      await stopNow();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off('exit', stopAtExit);
      await stopNow().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function findBinaries(): string {
  const fromEnv = process.env.CRASH_PG_BIN;
  const candidates = fromEnv
    ? [fromEnv]
    : existsSync(PG_ROOT)
      ? readdirSync(PG_ROOT)
          .filter((version) => /^\d+$/.test(version))
          .sort((a, b) => Number(b) - Number(a))
          .map((version) => join(PG_ROOT, version, 'bin'))
      : [];
  const found = candidates.find((bin) => existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl')));
  if (found === undefined) {
    throw new Error(
      `PostgreSQL server binaries (initdb, pg_ctl) not found in ${fromEnv ?? `${PG_ROOT}/<version>/bin`}. ` +
        'The crash suite runs a PostgreSQL server of its own: install the Debian package "postgresql" ' +
        '(bash scripts/ensure-services.sh does) or point CRASH_PG_BIN at the directory holding initdb and pg_ctl.',
    );
  }
  return found;
}
