// The name a claim writes on the rows it leases. On Cloud Foundry the container's hostname is its instance
// GUID; the process id and a random part tell apart two processes of one container or one host.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export function newLeaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}
