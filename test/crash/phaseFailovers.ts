// A database failover in every phase: each phase must terminate sessions of the service while its load runs. A
// sweep that found no session of the service terminated nothing and counts for nothing. The phase that restarts
// PostgreSQL is excused: its sweep may find no server and be skipped, and the restart ends every session itself.

export interface PhaseFailovers {
  index: number;
  /** The phase's sweeps that terminated at least one session of the service. */
  failovers: number;
  postgresRestarts: number;
}

/** One line per phase with no failover that terminated a session, unless PostgreSQL restarted in it. */
export function phasesWithoutFailover(phases: PhaseFailovers[]): string[] {
  return phases
    .filter((phase) => phase.failovers === 0 && phase.postgresRestarts === 0)
    .map((phase) => `phase ${phase.index}: no database failover terminated a session of the service`);
}
