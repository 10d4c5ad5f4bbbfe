// Where S/4HANA's sales orders are read (a BTP destination), which API, and how hard to press it.
import type { ApiVersion } from '../s4/odataService.js';
import type { EnvReader } from './envReader.js';

export interface S4Settings {
  destination: string;
  timeoutMs: number;
  version: ApiVersion;
  maxConcurrentReads: number;
  readBatch: number;
}

export function s4Config(read: EnvReader): S4Settings {
  const s4Api = read.text('S4_API', 'v2');
  if (s4Api !== 'v2' && s4Api !== 'v4') read.problems.push(`S4_API takes "v2" or "v4", got "${s4Api}"`);
  return {
    destination: read.text('S4_DESTINATION', 'S4HANA'),
    timeoutMs: read.int('S4_TIMEOUT_MS', 5000, 100, 120_000),
    version: s4Api === 'v4' ? 'v4' : 'v2',
    maxConcurrentReads: read.int('S4_MAX_CONCURRENT_READS', 4, 1, 64),
    readBatch: read.int('S4_READ_BATCH', 50, 1, 200),
  };
}
