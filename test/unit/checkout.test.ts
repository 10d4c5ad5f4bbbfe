import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// A client checked out of the pg pool without an error listener turns a database failover into an uncaught
// exception. src/db/checkout.ts is the one place that checks clients out; this keeps it the only one.
const SRC = fileURLToPath(new URL('../../src', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('pool checkout', () => {
  it('happens only in src/db/checkout.ts', () => {
    const checkingOut = sources(SRC)
      .filter((file) => /from 'pg'/.test(readFileSync(file, 'utf8')))
      .filter((file) => /\.connect\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(checkingOut).toEqual(['db/checkout.ts']);
  });
});
