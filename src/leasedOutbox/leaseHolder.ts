// The name a claim writes on the rows it leases: the host (machine or container), the process id, and a random
// part made at start, so that two processes of one host, or two starts that reuse a process id, differ.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export function newLeaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}
