// What the benchmark measures: S/4HANA's answer time × PostgreSQL's extra round trip, the service at its
// defaults (no AMQP_PREFETCH) beside the plain consumer at its prefetch, on the same load.

export interface Scenario {
  name: string;
  s4LatencyMs: number;
  /** Added to every round trip to PostgreSQL by the relay (pgRelay.ts); 0 connects directly. */
  pgDelayMs: number;
}

export function scenarioName(s4LatencyMs: number, pgDelayMs: number): string {
  return `s4-${s4LatencyMs}ms-pg-${pgDelayMs}ms`;
}

export const S4_LATENCIES_MS = [0, 50, 200];
export const PG_DELAYS_MS = [0, 1];

export const SCENARIOS: Scenario[] = PG_DELAYS_MS.flatMap((pgDelayMs) =>
  S4_LATENCIES_MS.map((s4LatencyMs) => ({
    name: scenarioName(s4LatencyMs, pgDelayMs),
    s4LatencyMs,
    pgDelayMs,
  })),
);

/** The deployed shape: S/4HANA in 50 ms, PostgreSQL a millisecond of round trip away. */
export const HEADLINE = { s4LatencyMs: 50, pgDelayMs: 1 };

/** The steady-rate window: latency from publish to commit, and what tracing every delivery costs. */
export const STEADY = { s4LatencyMs: 0, pgDelayMs: 1, perSecond: 200 };

/** Events before the marker, on orders of their own, so that JIT and pools are warm when the window opens. */
export function warmupCount(newEvents: number): number {
  return Math.min(1000, Math.max(100, Math.round(newEvents / 20)));
}
