// What a queue holds, seen from the broker's side: ready messages and those a consumer holds delivered but not
// yet settled. AMQP 0-9-1's queue.declare reports ready messages only, so "nothing in flight" needs the broker's
// own count: `rabbitmqctl`, run as root or through passwordless sudo (RabbitMQ 3.10 has no management API here).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** Runs a command as root: directly when this process is root, else through `sudo -n`. */
export function privileged(command: string, args: string[]) {
  return asRoot ? run(command, args) : run('sudo', ['-n', command, ...args]);
}

export interface QueueCounts {
  ready: number;
  unacknowledged: number;
}

/** Ready and consumer-held (delivered, not yet settled) messages of one queue. */
export async function queueCounts(name: string): Promise<QueueCounts> {
  const { stdout } = await privileged('rabbitmqctl', [
    'list_queues',
    '-q',
    '--no-table-headers',
    'name',
    'messages_ready',
    'messages_unacknowledged',
  ]);
  for (const line of stdout.split('\n')) {
    const [queue, ready, unacknowledged] = line.trim().split(/\s+/);
    if (queue === name) return { ready: Number(ready), unacknowledged: Number(unacknowledged) };
  }
  throw new Error(`rabbitmqctl list_queues does not show queue ${name}`);
}

/** Nothing ready and nothing delivered but unsettled: every message that reached the queue is settled for good. */
export function isIdle(counts: QueueCounts): boolean {
  return counts.ready + counts.unacknowledged === 0;
}
