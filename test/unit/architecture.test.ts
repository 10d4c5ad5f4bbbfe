// The house's floors, read from the import lines of src/: the shared path is handed the event families by the
// composition root and never reaches up for them, and the imports that run back up against the floors stay few.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

// Top down: a room imports rooms on its own floor or below; an import up is an arrow back up.
const FLOORS: Record<string, number> = {
  'main.ts': 11,
  service: 10,
  messaging: 9,
  maintenance: 9,
  reconcile: 9,
  families: 8,
  config: 8,
  http: 7,
  events: 6,
  portal: 5,
  s4: 4,
  notifications: 4,
  telemetry: 3,
  'retry.ts': 2,
  leasedOutbox: 2,
  'errors.ts': 1,
  db: 1,
};

/** Arrows back up today, each a known exception: the next one is a design decision, not an accident. */
const MOST_ARROWS_UP = 4;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every file of src/ with the files of src/ it imports (static or dynamic, types included). */
function imports(): Array<{ file: string; imported: string[] }> {
  return sourceFiles(SRC).map((path) => {
    const text = readFileSync(path, 'utf8');
    const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(
      (match) => match[1] as string,
    );
    return {
      file: relative(SRC, path),
      imported: specifiers.map((specifier) => normalize(join(dirname(relative(SRC, path)), specifier))),
    };
  });
}

/** A file's room: its folder under src/, or the file itself at the top (imported as `.js`). */
const roomOf = (file: string) => (file.split('/')[0] as string).replace(/\.js$/, '.ts');

describe('the architecture of src/', () => {
  const graph = imports();

  it('knows the floor of every room', () => {
    const rooms = new Set(graph.map(({ file }) => roomOf(file)));
    expect([...rooms].filter((room) => FLOORS[room] === undefined)).toEqual([]);
  });

  it('lets only the composition root and the registry itself import the event families', () => {
    const reaching = graph.flatMap(({ file, imported }) =>
      ['families', 'service'].includes(roomOf(file))
        ? []
        : imported.filter((target) => roomOf(target) === 'families').map((target) => `${file} → ${target}`),
    );
    expect(reaching).toEqual([]);
  });

  it(`has at most ${MOST_ARROWS_UP} arrows back up between rooms`, () => {
    const up = new Set<string>();
    for (const { file, imported } of graph) {
      const from = roomOf(file);
      for (const target of imported) {
        const to = roomOf(target);
        if ((FLOORS[to] ?? 0) > (FLOORS[from] ?? 0)) up.add(`${from} → ${to}`);
      }
    }
    expect([...up].sort().length, [...up].sort().join(', ')).toBeLessThanOrEqual(MOST_ARROWS_UP);
  });
});
