// Real material written outside this project (captured S/4HANA events, messages of the official CloudEvents SDK,
// SchemaStore's descriptor schemas): `shared/real-samples` beside the checkout, searched upwards from it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function samplesDir(): string {
  let dir = fileURLToPath(new URL('../../', import.meta.url));
  for (;;) {
    const candidate = join(dir, '..', 'shared', 'real-samples');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('shared/real-samples not found beside the checkout or above it');
    dir = parent;
  }
}

export const REAL_SAMPLES = samplesDir();

export function readSample(path: string): string {
  return readFileSync(join(REAL_SAMPLES, path), 'utf8');
}

/** A real S/4HANA sales-order event (structured JSON, as S/4HANA publishes it), by file name in events/. */
export function s4Sample(name: 'capire-salesorder-created' | 's4hclnt100-salesorder-changed.from-script'): {
  text: string;
  event: Record<string, unknown> & { id: string; source: string; data: { SalesOrder: string } };
} {
  const text = readSample(`events/${name}.json`);
  return { text, event: JSON.parse(text) };
}
