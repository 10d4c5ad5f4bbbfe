// The customer returns of a crash run's plan: a few warranty returns whose events are mixed into each phase's
// load beside the orders', drawn from the phase's seed like the rest of the plan.
import { CUSTOMER_RETURN_TYPE, S4_SOURCE, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { CustomerReturnState } from '../../sandbox/s4Returns.js';
import { expectedCaseStatus } from './caseStatusTable.js';
import type { Random } from './random.js';

/** The part of a planned phase the returns join (scenario.ts's Phase). */
interface PhaseLoad {
  index: number;
  returnChanges: CustomerReturnState[];
  batches: Array<Array<{ body: string; contentType: string; identity?: string; malformed?: string }>>;
  identities: string[];
  counts: { events: number; copies: number; duplicateCopies: number };
}

// Warranty returns mixed into every phase's load, beside the orders.
export const RETURNS = 3;
// Each status of a return a state can be in (docs/contracts.md), the fields that make it.
const CASE_FIELDS: Array<Pick<CustomerReturnState, 'overallSDProcessStatus' | 'rejectionStatus'>> = [
  { overallSDProcessStatus: 'A', rejectionStatus: 'A' },
  { overallSDProcessStatus: 'B', rejectionStatus: 'A' },
  { overallSDProcessStatus: 'C', rejectionStatus: 'A' },
  { overallSDProcessStatus: 'B', rejectionStatus: 'C' },
];

/**
 * Adds the phase's return events: each return is created in the first phase and later changes its status, or
 * only its reference, or nothing. A change is announced by its header event and item events, some published
 * twice; they go out in the phase's first batches, shuffled among the orders' messages.
 */
export function mixReturns(
  phase: PhaseLoad,
  random: Random,
  returns: string[],
  states: Map<string, CustomerReturnState>,
): void {
  for (const customerReturn of returns) {
    const current = states.get(customerReturn);
    if (current !== undefined && !random.chance(0.7)) continue;
    const lastChangeDateTime = new Date(
      Date.UTC(2026, 10, 30, 8 + phase.index, random.int(0, 58), random.int(0, 59)),
    ).toISOString();
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
      lastChangeDateTime,
    };
    if (current !== undefined && random.chance(0.8)) {
      const now = expectedCaseStatus(current);
      Object.assign(
        next,
        random.pick(CASE_FIELDS.filter((fields) => expectedCaseStatus({ ...next, ...fields }) !== now)),
      );
    } else if (current !== undefined) next.customerReference = `RMA-${random.int(10_000, 99_999)}`;
    states.set(customerReturn, next);
    phase.returnChanges.push(next);
    const change = current === undefined ? 'Created' : 'Changed';
    const types = [change, ...random.shuffle(['ItemCreated', 'ItemChanged']).slice(0, random.int(0, 2))];
    for (const type of types) {
      const id = `${random.hex(8)}-${random.hex(4)}-${random.hex(4)}-${random.hex(4)}-${random.hex(12)}`;
      const body = salesOrderEvent({
        type: `${CUSTOMER_RETURN_TYPE}${type}.v1`,
        id,
        time: lastChangeDateTime,
        data: { CustomerReturn: customerReturn, EventRaisedDateTime: lastChangeDateTime },
      });
      const copies = random.chance(0.35) ? 2 : 1;
      const message = {
        body,
        contentType: 'application/json',
        identity: `${S4_SOURCE} ${id}`,
        malformed: undefined,
      };
      for (let copy = 0; copy < copies; copy++) {
        const batch = phase.batches[random.int(0, phase.batches.length - 2)] as PhaseLoad['batches'][number];
        batch.splice(random.int(0, batch.length), 0, message);
      }
      phase.identities.push(message.identity);
      phase.counts.events += 1;
      phase.counts.copies += copies;
      phase.counts.duplicateCopies += copies - 1;
    }
  }
}
