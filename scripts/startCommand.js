// The deployed start command as package.json's start script states it (mta.yaml and manifest.yml repeat it):
// read here once, so whatever starts the service as deployed uses the same node flags.
import { readFileSync } from 'node:fs';
const start = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts.start;
/** The node flags of the start command: the heap ceiling among them decides how far the heap grows. */
export const DEPLOYED_NODE_FLAGS = start
    .split(/\s+/)
    .filter((word) => word.startsWith('--'));
