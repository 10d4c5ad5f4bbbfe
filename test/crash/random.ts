// Seeded randomness, so that a run's plan (orders, changes, events, fault shares, kill times) can be replayed
// with CRASH_SEED. Timing between processes still varies from run to run; the plan does not.

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer from min to max, both included. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  shuffle<T>(items: readonly T[]): T[];
  hex(length: number): string;
  /** An independent stream for one concern, so that adding draws to one does not shift the others. */
  fork(label: string): Random;
}

/** CRASH_SEED when set (decimal or 0x hex), else a fresh seed that the run prints. */
export function seedFrom(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return Math.floor(Math.random() * 2 ** 32);
  const seed = Number(value.trim());
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) {
    throw new Error(`CRASH_SEED must be an integer from 0 to ${2 ** 32 - 1}, got "${value}"`);
  }
  return seed;
}

export function createRandom(seed: number): Random {
  // mulberry32: small, fast and good enough to spread test decisions.
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    chance: (probability) => next() < probability,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)] as T;
    },
    shuffle<T>(items: readonly T[]): T[] {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = int(0, i);
        [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
      }
      return copy;
    },
    hex: (length) => Array.from({ length }, () => int(0, 15).toString(16)).join(''),
    fork: (label) => createRandom(hash(`${seed}:${label}`)),
  };
}

/** A stable 32-bit hash (FNV-1a): decisions keyed by what they are about, not by when they are asked. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A float in [0, 1) determined by the seed and a key. */
export function unitFor(seed: number, key: string): number {
  return createRandom(hash(`${seed}:${key}`)).next();
}
