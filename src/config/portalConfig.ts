// Pushing each order's state to the fleet portal's HTTP API, through a BTP destination; off without one.
import type { EnvReader } from './envReader.js';

export interface PortalSettings {
  destination: string;
  timeoutMs: number;
  leaseSeconds: number;
}

/** Undefined (PORTAL_DESTINATION unset): no push. */
export function portalConfig(read: EnvReader): PortalSettings | undefined {
  const destination = read.optional('PORTAL_DESTINATION');
  // Checked even without a destination: a wrong value fails the start before anyone turns the push on.
  const timeoutMs = read.int('PORTAL_TIMEOUT_MS', 5000, 100, 120_000);
  const leaseSeconds = read.int('PORTAL_LEASE_SECONDS', 15, 5, 3600);
  return destination === undefined ? undefined : { destination, timeoutMs, leaseSeconds };
}
