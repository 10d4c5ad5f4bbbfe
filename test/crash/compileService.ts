// Compiles the service exactly as `npm run build` does (tsconfig.build.json), but into a directory of the
// run's own: instances are restarted throughout the run, and a `dist/` rebuilt meanwhile by someone else
// would hand a restarted instance half-written files.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Builds `source` (a checkout: src/, db/, console/, tsconfig.build.json, package.json) into `<dir>/dist` beside
 * links to its db/ and console/ and the repository's node_modules/ and a copy of package.json (ESM): the
 * repository's layout, so the compiled code finds its migrations, the console's files and its dependencies.
 * Returns the path of the compiled main.js.
 */
export async function compileService(dir: string, source: string = REPO_ROOT): Promise<string> {
  await mkdir(dir, { recursive: true });
  await copyFile(join(source, 'package.json'), join(dir, 'package.json'));
  await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  await symlink(join(source, 'db'), join(dir, 'db'));
  await symlink(join(source, 'console'), join(dir, 'console'));
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const outDir = join(dir, 'dist');
  try {
    await run(process.execPath, [tsc, '-p', join(source, 'tsconfig.build.json'), '--outDir', outDir], {
      cwd: source,
    });
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`the service does not compile (tsc -p tsconfig.build.json):\n${stdout}${stderr}`);
  }
  return join(outDir, 'main.js');
}
