// How events arrive (INGEST): over AMQP, by Event Mesh's webhook, by Event Hub's push; any of them at once.
import type { EnvReader } from './envReader.js';

export type Ingest = 'amqp' | 'webhook' | 'event-hub';
const INGESTS: readonly Ingest[] = ['amqp', 'webhook', 'event-hub'];

export function ingestConfig(read: EnvReader): Ingest[] {
  const ingest: Ingest[] = [];
  for (const kind of read.list('INGEST').length > 0 ? read.list('INGEST') : ['amqp']) {
    const known = INGESTS.find((candidate) => candidate === kind);
    if (known === undefined)
      read.problems.push(`INGEST takes "amqp", "webhook" and "event-hub", comma-separated, got "${kind}"`);
    else if (!ingest.includes(known)) ingest.push(known);
  }
  return ingest;
}
