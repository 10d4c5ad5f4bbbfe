// Reconciliation against S/4HANA (docs/reconciliation.md): which system's events it stands in for, how often it
// runs, how far back each window reaches and how many documents a page holds. Off without S4_SOURCE.
import type { EnvReader } from './envReader.js';

export interface ReconcileSettings {
  /** S4_SOURCE: the CloudEvents `source` of the S/4HANA system behind S4_DESTINATION. */
  source: string;
  /** Time between delta runs; undefined (RECONCILE_INTERVAL=off): runs only when asked for. */
  intervalMs: number | undefined;
  /** How far before the mark a delta window starts. */
  overlapMs: number;
  /** How far behind this service's clock the mark stays: commit lag and clock skew. */
  settleMs: number;
  pageSize: number;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^(\d{1,6})(s|m|h)$/;
/** A day: a longer interval, overlap or settle time would no longer be a reconciliation of recent changes. */
const MAX_DURATION_MS = 86_400_000;

/** `30s`, `5m`, `1h` in milliseconds, or undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (match === null) return undefined;
  return Number(match[1]) * (UNITS[match[2] as string] as number);
}

/** Undefined (S4_SOURCE unset): no reconciliation. The other keys are checked either way. */
export function reconcileConfig(read: EnvReader): ReconcileSettings | undefined {
  const duration = (
    key: 'RECONCILE_INTERVAL' | 'RECONCILE_OVERLAP' | 'RECONCILE_SETTLE',
    fallback: string,
  ) => {
    const raw = read.text(key, fallback);
    const ms = parseDuration(raw);
    if (ms === undefined || ms > MAX_DURATION_MS) {
      read.problems.push(`${key} takes a duration such as 30s, 5m or 1h, at most 24h, got "${raw}"`);
      return parseDuration(fallback) as number;
    }
    return ms;
  };
  const off = read.optional('RECONCILE_INTERVAL') === 'off';
  const intervalMs = off ? undefined : duration('RECONCILE_INTERVAL', '5m');
  if (intervalMs === 0) read.problems.push('RECONCILE_INTERVAL must be longer than 0s; "off" turns it off');
  const overlapMs = duration('RECONCILE_OVERLAP', '15m');
  const settleMs = duration('RECONCILE_SETTLE', '2m');
  const pageSize = read.int('RECONCILE_PAGE_SIZE', 200, 1, 1000);
  const source = read.optional('S4_SOURCE');
  return source === undefined ? undefined : { source, intervalMs, overlapMs, settleMs, pageSize };
}
