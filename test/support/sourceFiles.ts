import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** The product's source files whose text matches every pattern, as paths relative to src/. */
export function sourcesMatching(...patterns: RegExp[]): string[] {
  return sources(SRC)
    .filter((file) => {
      const text = readFileSync(file, 'utf8');
      return patterns.every((pattern) => pattern.test(text));
    })
    .map((file) => relative(SRC, file))
    .sort();
}
