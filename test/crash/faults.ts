// Faults of the dependencies the suite stands in for: S/4HANA answers 503 or hangs past the service's
// timeout for a share of reads, of orders and of customer returns alike; the mail relay refuses a share of sends
// for now (451). Every decision is counted, and mail acceptances are timed, so duplicates can be traced back to
// what caused them.
import type { PortalFault, PortalFaultFn } from '../../sandbox/portalServer.js';
import type { S4Fault, S4FaultFn } from '../../sandbox/s4Server.js';
import type { SmtpDecision, SmtpRefuseFn } from '../../sandbox/smtpServer.js';
import { createRandom, unitFor } from './random.js';

/** The faults of one family's reads: drawn per key and call, and outages, counted apart from the other's. */
export interface ReadFaults {
  fn: S4FaultFn;
  counts: { unavailable: number; hang: number; outage: number };
  /** From now on, the next `calls` reads of the key answer 503. */
  outage(key: string, calls: number): void;
}

export interface S4Faults {
  orders: ReadFaults;
  /** Customer returns' reads, single and collection, over either API: the same shares as orders'. */
  returns: ReadFaults;
  /** No faults at all (the final checks read nothing through S/4HANA, but a quiet stand-in helps diagnosis). */
  pause(paused: boolean): void;
}

export function createS4Faults(seed: number, shares: { unavailable: number; hang: number }): S4Faults {
  let paused = false;
  const readFaults = (drawKey: (key: string, callNo: number) => string): ReadFaults => {
    const counts = { unavailable: 0, hang: 0, outage: 0 };
    const outages = new Map<string, number>();
    return {
      counts,
      outage(key, calls) {
        outages.set(key, calls);
      },
      fn(key, callNo): S4Fault {
        if (paused) return 'ok';
        const left = outages.get(key) ?? 0;
        if (left > 0) {
          outages.set(key, left - 1);
          counts.outage++;
          return 'unavailable';
        }
        return drawFault(seed, drawKey(key, callNo), shares, counts) ?? 'ok';
      },
    };
  };
  return {
    orders: readFaults((salesOrder, callNo) => `s4 ${salesOrder} ${callNo}`),
    returns: readFaults((customerReturn, callNo) => `s4 return ${customerReturn} ${callNo}`),
    pause(value) {
      paused = value;
    },
  };
}

export interface SmtpFaults {
  fn: SmtpRefuseFn;
  counts: { refused: number };
  /** Times each Message-ID was accepted. */
  accepted: Map<string, number[]>;
  refusedById: Map<string, number>;
}

export function createSmtpFaults(seed: number, share: number): SmtpFaults {
  const random = createRandom(seed).fork('smtp');
  const counts = { refused: 0 };
  const accepted = new Map<string, number[]>();
  const refusedById = new Map<string, number>();
  return {
    counts,
    accepted,
    refusedById,
    fn({ messageId = '' }): SmtpDecision {
      if (random.chance(share)) {
        counts.refused++;
        refusedById.set(messageId, (refusedById.get(messageId) ?? 0) + 1);
        return 'transient';
      }
      accepted.set(messageId, [...(accepted.get(messageId) ?? []), Date.now()]);
      return 'accept';
    },
  };
}

export interface PortalFaults {
  fn: PortalFaultFn;
  counts: { unavailable: number; hang: number };
}

/** The portal's API answers 503 or hangs past PORTAL_TIMEOUT_MS for a share of PUTs, drawn per order and call. */
export function createPortalFaults(
  seed: number,
  shares: { unavailable: number; hang: number },
): PortalFaults {
  const counts = { unavailable: 0, hang: 0 };
  return {
    counts,
    fn: (salesOrder, callNo): PortalFault | undefined =>
      drawFault(seed, `portal ${salesOrder} ${callNo}`, shares, counts),
  };
}

/**
 * A 503 or a hang for a share of calls, counted. Keyed by what is called and the call's number, so that a replay
 * makes the same call fail.
 */
function drawFault(
  seed: number,
  key: string,
  shares: { unavailable: number; hang: number },
  counts: { unavailable: number; hang: number },
): 'unavailable' | 'hang' | undefined {
  const draw = unitFor(seed, key);
  if (draw < shares.unavailable) {
    counts.unavailable++;
    return 'unavailable';
  }
  if (draw < shares.unavailable + shares.hang) {
    counts.hang++;
    return 'hang';
  }
  return undefined;
}
