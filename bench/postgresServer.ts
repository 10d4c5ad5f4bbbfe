// The benchmark's own PostgreSQL server: initdb into a temporary directory, its own port, stopped and removed at
// the end. Its own so that it can run with `track_commit_timestamp = on`, which the shared server has off: the
// commit time of every recorded event is then PostgreSQL's own (`pg_xact_commit_timestamp(xmin)`), not the start
// of its transaction, and with pg_stat_statements loaded. Otherwise PostgreSQL's defaults, durable commits
// included, as a managed database keeps them.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './serviceProcess.js';

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';

export interface PostgresServer {
  /** The `postgres` database of the server. */
  url: string;
  stop(): Promise<void>;
}

/** initdb refuses to run as root: as root, the server runs as the `postgres` OS user. */
export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = newestBinaries();
  const dir = await mkdtemp(join(tmpdir(), 'fon-bench-pg-'));
  const asRoot = process.getuid?.() === 0;
  const command = (tool: string, args: string[]) =>
    asRoot ? ['runuser', '-u', 'postgres', '--', join(bin, tool), ...args] : [join(bin, tool), ...args];
  const pg = (tool: string, args: string[]) => {
    const [file, ...rest] = command(tool, args);
    return run(file as string, rest);
  };
  if (asRoot) {
    const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
    await chown(dir, await id('-u'), await id('-g'));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  // pg_stat_statements: the statement times of the full-window drain (probes.ts).
  const options =
    `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c track_commit_timestamp=on -c max_connections=200 ` +
    '-c shared_preload_libraries=pg_stat_statements';
  await pg('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', options, 'start']);
  const stopArgs = ['-D', data, '-m', 'immediate', '-w', 'stop'];
  // An aborted run must not leave the server behind.
  const stopAtExit = () => {
    const [file, ...rest] = command('pg_ctl', stopArgs);
    try {
      execFileSync(file as string, rest, { stdio: 'ignore' });
    } catch {
      // Already stopped.
    }
  };
  process.once('exit', stopAtExit);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      process.off('exit', stopAtExit);
      await pg('pg_ctl', stopArgs).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function newestBinaries(): string {
  const versions = existsSync(PG_ROOT) ? readdirSync(PG_ROOT).filter((v) => /^\d+$/.test(v)) : [];
  const bin = versions
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => join(PG_ROOT, version, 'bin'))
    .find((dir) => existsSync(join(dir, 'initdb')));
  if (bin === undefined) throw new Error(`no PostgreSQL server binaries in ${PG_ROOT}/<version>/bin`);
  return bin;
}
