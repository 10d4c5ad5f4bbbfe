// The customer returns of a crash run's plan: a few warranty returns whose events are mixed into each phase's
// load beside the orders', drawn from the phase's seed like the rest of the plan. A return is created (now and
// then announced before S/4HANA's API has it: the replication-lag window), changes, and may be deleted; after
// its deletion the Deleted event comes again and a Changed event raised before it arrives late.
import { CUSTOMER_RETURN_TYPE, S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { CustomerReturnState } from '../../sandbox/s4Returns.js';
import { expectedCaseStatus } from './caseStatusTable.js';
import type { Random } from './random.js';

/** A return's new state in S/4HANA, or its deletion. */
export interface ReturnChange {
  /** The state from this change on; for a deletion, the last state the return had. */
  state: CustomerReturnState;
  deleted: boolean;
  /** Taken on by S/4HANA before batch `batch` is published (0: before the phase's events). */
  batch: number;
  /** S/4HANA published no event for it: only reconciliation brings it to the case. */
  dropped?: boolean;
}

interface Message {
  body: string;
  contentType: string;
  identity: string;
  malformed: undefined;
}

/** The part of a planned phase the returns join (scenario.ts's Phase). */
interface PhaseLoad {
  index: number;
  returnChanges: ReturnChange[];
  /** Returns whose reads fail (503) for this many calls from the phase's start. */
  returnOutages: Array<{ customerReturn: string; failingCalls: number }>;
  batches: Array<Array<{ body: string; contentType: string; identity?: string; malformed?: string }>>;
  identities: string[];
  counts: { events: number; copies: number; duplicateCopies: number };
}

/** What the plan knows of a return from phase to phase. */
export interface ReturnHistory {
  state: CustomerReturnState;
  /** The phase that deleted it and its Deleted event, published again in the next phase. */
  deleted?: { phase: number; event: Message };
}

// Warranty returns mixed into every phase's load, beside the orders.
export const RETURNS = 4;
// Phases that may delete a return; the last of them deletes one if none was yet, so every run withdraws a case,
// and each leaves a later phase for what arrives after a deletion.
const DELETING_PHASES = [2, 3];
// The share of a return's changes whose events S/4HANA never publishes.
const DROP_SHARE = 0.25;
// Each status of a return a state can be in (docs/contracts.md), the fields that make it.
const CASE_FIELDS: Array<Pick<CustomerReturnState, 'overallSDProcessStatus' | 'rejectionStatus'>> = [
  { overallSDProcessStatus: 'A', rejectionStatus: 'A' },
  { overallSDProcessStatus: 'B', rejectionStatus: 'A' },
  { overallSDProcessStatus: 'C', rejectionStatus: 'A' },
  { overallSDProcessStatus: 'B', rejectionStatus: 'C' },
];

/**
 * Adds the phase's return events: each return is created in the first phase and later changes its status, or
 * only its reference, or nothing, or is deleted. A change is announced by its header event and item events,
 * some published twice; they go out in the phase's first batches, shuffled among the orders' messages.
 */
export function mixReturns(
  phase: PhaseLoad,
  random: Random,
  returns: string[],
  histories: Map<string, ReturnHistory>,
): void {
  let deletedBefore = [...histories.values()].some((history) => history.deleted !== undefined);
  for (const customerReturn of returns) {
    const history = histories.get(customerReturn);
    if (history?.deleted !== undefined) {
      if (history.deleted.phase === phase.index - 1) afterDeletion(phase, random, history);
      continue;
    }
    const current = history?.state;
    const time = new Date(
      Date.UTC(2026, 10, 30, 8 + phase.index, random.int(0, 58), random.int(0, 59)),
    ).toISOString();
    if (current !== undefined && DELETING_PHASES.includes(phase.index)) {
      const forced = phase.index === DELETING_PHASES.at(-1) && !deletedBefore;
      if (random.chance(0.3) || forced) {
        deletedBefore = true;
        const event = returnEvent(random, customerReturn, 'Deleted', time);
        histories.set(customerReturn, { state: current, deleted: { phase: phase.index, event } });
        phase.returnChanges.push({ state: current, deleted: true, batch: 0 });
        publish(phase, random, event, copiesOf(random));
        maybeOutage(phase, random, customerReturn);
        continue;
      }
    }
    if (current !== undefined && !random.chance(0.7)) continue;
    const next: CustomerReturnState = {
      customerReturn,
      soldToParty: '17100001',
      customerReference: `RMA-${random.int(1000, 9999)}`,
      orderReason: '009',
      referenceSDDocument: '8100000',
      referenceSDDocumentCategory: 'C',
      items: [{ customerReturnItem: '10', returnReason: '103' }],
      ...CASE_FIELDS[0],
      ...current,
      lastChangeDateTime: time,
    };
    if (current !== undefined && random.chance(0.8)) {
      const now = expectedCaseStatus(current);
      Object.assign(
        next,
        random.pick(CASE_FIELDS.filter((fields) => expectedCaseStatus({ ...next, ...fields }) !== now)),
      );
    } else if (current !== undefined) next.customerReference = `RMA-${random.int(10_000, 99_999)}`;
    histories.set(customerReturn, { state: next });
    if (current !== undefined && random.chance(DROP_SHARE)) {
      phase.returnChanges.push({ state: next, deleted: false, batch: 0, dropped: true });
      continue;
    }
    // A created return is now and then announced a batch before S/4HANA's API has it (replication lag).
    const lagging = current === undefined && random.chance(0.5);
    phase.returnChanges.push({ state: next, deleted: false, batch: lagging ? 1 : 0 });
    const change = current === undefined ? 'Created' : 'Changed';
    const types = [change, ...random.shuffle(['ItemCreated', 'ItemChanged']).slice(0, random.int(0, 2))];
    for (const [k, type] of types.entries()) {
      const event = returnEvent(random, customerReturn, type, time);
      publish(phase, random, event, copiesOf(random), lagging && k === 0 ? 0 : undefined);
    }
    maybeOutage(phase, random, customerReturn);
  }
}

/**
 * The phase after a deletion: the Deleted event again (a redelivery of an event already taken) and a Changed
 * event S/4HANA raised before the deletion, arriving only now. The case stays withdrawn, with no email or push.
 */
function afterDeletion(phase: PhaseLoad, random: Random, history: ReturnHistory): void {
  const { deleted, state } = history;
  if (deleted === undefined) return;
  const batch = pickBatch(phase, random);
  batch.splice(random.int(0, batch.length), 0, deleted.event);
  phase.counts.copies += 1;
  phase.counts.duplicateCopies += 1;
  publish(phase, random, returnEvent(random, state.customerReturn, 'Changed', state.lastChangeDateTime), 1);
}

function returnEvent(random: Random, customerReturn: string, type: string, time: string): Message {
  const id = `${random.hex(8)}-${random.hex(4)}-${random.hex(4)}-${random.hex(4)}-${random.hex(12)}`;
  const body = salesOrderEvent({
    type: `${CUSTOMER_RETURN_TYPE}${type}.v1`,
    id,
    time,
    data: { CustomerReturn: customerReturn, EventRaisedDateTime: time },
  });
  return { body, contentType: 'application/json', identity: `${S4_SOURCE} ${id}`, malformed: undefined };
}

const copiesOf = (random: Random) => (random.chance(0.35) ? 2 : 1);

/** Puts `copies` of a new event into the phase's first batches (or into batch `at`), and counts it. */
function publish(phase: PhaseLoad, random: Random, message: Message, copies: number, at?: number): void {
  for (let copy = 0; copy < copies; copy++) {
    const batch = at === undefined ? pickBatch(phase, random) : (phase.batches[at] as Message[]);
    batch.splice(random.int(0, batch.length), 0, message);
  }
  phase.identities.push(message.identity);
  phase.counts.events += 1;
  phase.counts.copies += copies;
  phase.counts.duplicateCopies += copies - 1;
}

/** One of the batches before the last, which holds the orders' follow-up changes. */
function pickBatch(phase: PhaseLoad, random: Random): PhaseLoad['batches'][number] {
  return phase.batches[random.int(0, phase.batches.length - 2)] as PhaseLoad['batches'][number];
}

/** Now and then the return's reads fail for a few calls, forcing releases as the orders' outages do. */
function maybeOutage(phase: PhaseLoad, random: Random, customerReturn: string): void {
  if (random.chance(0.3)) phase.returnOutages.push({ customerReturn, failingCalls: random.int(4, 9) });
}
