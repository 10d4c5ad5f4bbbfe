// How the configuration modules read the environment: every value trimmed, an empty one taken as unset, and
// every problem collected in one list instead of thrown, so an operator fixes a deployment in one round.
import { type BoundService, boundServices } from './boundServices.js';
import type { ConfigKey } from './keys.js';

/** The configuration keys, and VCAP_SERVICES, which Cloud Foundry sets. */
export type Env = Partial<Record<ConfigKey | 'VCAP_SERVICES', string>>;

export interface EnvReader {
  /** Every problem found so far, in the order found. */
  problems: string[];
  optional(key: ConfigKey): string | undefined;
  text(key: ConfigKey, fallback: string): string;
  int(key: ConfigKey, fallback: number, min: number, max: number): number;
  /** A comma-separated list, empty items dropped. */
  list(key: ConfigKey): string[];
  /** The credentials of the bound service with this label; more than one such service is a problem. */
  bound(label: string): Record<string, unknown> | undefined;
  /** The bound services (VCAP_SERVICES) that carry this tag. */
  tagged(tag: string): BoundService[];
}

export function envReader(env: Env): EnvReader {
  const problems: string[] = [];
  const optional = (key: ConfigKey): string | undefined => {
    const value = env[key]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const text = (key: ConfigKey, fallback: string): string => optional(key) ?? fallback;
  const services = boundServices(env.VCAP_SERVICES, problems);
  return {
    problems,
    optional,
    text,
    int(key, fallback, min, max) {
      const raw = optional(key);
      if (raw === undefined) return fallback;
      const value = Number(raw);
      if (Number.isInteger(value) && value >= min && value <= max) return value;
      problems.push(`${key} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    },
    list: (key) =>
      text(key, '')
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    bound(label) {
      const matching = services.filter((service) => service.label === label);
      if (matching.length > 1)
        problems.push(`${matching.length} services with label "${label}" are bound; bind one`);
      return matching[0]?.credentials;
    },
    tagged: (tag) => services.filter((service) => service.tags?.includes(tag) === true),
  };
}
