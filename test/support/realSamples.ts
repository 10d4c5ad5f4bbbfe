// Sample files in one layout (events/, cloudevents/, schemas/): hand-made ones in test/fixtures/samples, and real
// material written outside this project in `shared/real-samples` beside the checkout or above it. Without that
// folder the tests that read it are skipped and named in one line of the output; REAL_SAMPLES=required fails them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestOptions } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** Set on a test that was not run because the real samples were not found. */
    realSamplesMissing?: boolean;
  }
}

const REAL_SAMPLES_PLACE = '../shared/real-samples';

function findRealSamples(): string | undefined {
  let dir = fileURLToPath(new URL('../../', import.meta.url));
  for (;;) {
    const candidate = join(dir, '..', 'shared', 'real-samples');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function realSamplesRequired(setting: string | undefined): boolean {
  if (setting === undefined || setting === '') return false;
  if (setting === 'required') return true;
  throw new Error(`REAL_SAMPLES must be "required" or unset, not "${setting}"`);
}

const REAL_SAMPLES_DIR = findRealSamples();
if (REAL_SAMPLES_DIR === undefined && realSamplesRequired(process.env.REAL_SAMPLES)) {
  throw new Error(
    `REAL_SAMPLES=required, but the real samples were not found (${REAL_SAMPLES_PLACE} beside the checkout or above it)`,
  );
}

export interface SampleSource {
  /** For test names: where the files come from. */
  origin: 'hand-made' | 'real';
  /** Options for each test or suite that reads from this source. */
  options: TestOptions;
  read(path: string): string;
}

function sourceAt(dir: string | undefined, origin: SampleSource['origin']): SampleSource {
  return {
    origin,
    options: dir === undefined ? { skip: true, meta: { realSamplesMissing: true } } : {},
    read: (path) => {
      if (dir === undefined) throw new Error(`the real samples were not found (${REAL_SAMPLES_PLACE})`);
      return readFileSync(join(dir, path), 'utf8');
    },
  };
}

export const HAND_MADE = sourceAt(
  fileURLToPath(new URL('../fixtures/samples/', import.meta.url)),
  'hand-made',
);
export const REAL = sourceAt(REAL_SAMPLES_DIR, 'real');

/** A sales-order event as S/4HANA publishes it (structured JSON), by file name in events/ of its source. */
export interface EventSample {
  source: SampleSource;
  name: string;
}

// Hand-made: a header event in the shape SAP documents (every data field), and a minimal one (SalesOrder only).
export const HAND_MADE_CHANGED: EventSample = { source: HAND_MADE, name: 'salesorder-changed' };
export const HAND_MADE_CREATED: EventSample = { source: HAND_MADE, name: 'salesorder-created' };
export const CAPIRE_EVENT: EventSample = { source: REAL, name: 'capire-salesorder-created' };
export const SCRIPT_EVENT: EventSample = { source: REAL, name: 's4hclnt100-salesorder-changed.from-script' };

export function readEvent({ source, name }: EventSample): {
  text: string;
  event: Record<string, unknown> & { id: string; source: string; data: { SalesOrder: string } };
} {
  const text = source.read(`events/${name}.json`);
  return { text, event: JSON.parse(text) };
}

/** The HTTP message that `HTTP.binary` or `HTTP.structured` of the CloudEvents SDK (10.0.0) made of the event. */
export function readSdkMessage(
  { source, name }: EventSample,
  mode: 'binary' | 'structured',
): { headers: Record<string, string>; body: string } {
  const { headers, body } = JSON.parse(source.read(`cloudevents/${name}.http-${mode}.json`));
  return { headers, body };
}
