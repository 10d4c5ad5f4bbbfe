// The customer-return family: its state is the return as S/4HANA has it now, read in batches like orders, as a
// warranty case; its effect is one statement for the events one read answered (effect.ts). A return the API
// does not know is withdrawn after a Deleted event, and after Created or Changed waited for (replication lag)
// until the event is RETURN_READ_LAG_MS old or on its last allowed delivery, then settled as not found.
import { PermanentError, TransientError } from '../../errors.js';
import { groupEffects } from '../../events/effectGroups.js';
import type { Family } from '../../events/family.js';
import { deliveriesSoFar } from '../../events/inbox.js';
import type { ParsedEvent } from '../../events/parsedEvent.js';
import { batchReads } from '../../s4/batchedReads.js';
import { inSpan, SpanKind, traceparentOf } from '../../telemetry/tracing.js';
import { type FamilyDeps, familyReadOptions } from '../familyDeps.js';
import { createCustomerReturnApi } from './api.js';
import { type CaseState, writeCase } from './effect.js';
import { returnChangeOf } from './events.js';
import { RETURN_READ_LAG_MS, toWarrantyCase, whenReturnMissing } from './state.js';
import { isWarrantyCase } from './warrantyFilter.js';

export interface CustomerReturnFamilyDeps extends FamilyDeps {
  /** How long a return announced as created or changed may be missing from the API; RETURN_READ_LAG_MS. */
  maxReadLagMs?: number;
  /** MAX_DELIVERIES: the last delivery the handler lets through waits no longer, whatever the lag allows. */
  maxDeliveries: number;
  /** WARRANTY_RETURN_REASONS; undefined: every customer return is a warranty case. */
  warrantyReturnReasons: ReadonlySet<string> | undefined;
}

export function createCustomerReturnFamily(deps: CustomerReturnFamilyDeps): Family<CaseState> {
  const { pool, s4, mail } = deps;
  const maxLagMs = deps.maxReadLagMs ?? RETURN_READ_LAG_MS;
  const batchedRead = batchReads(createCustomerReturnApi(s4), familyReadOptions(deps));
  const missing = async (event: ParsedEvent, customerReturn: string, readAt: Date) => {
    const change = returnChangeOf(event.type) ?? 'changed';
    const { waitedMs, attempts } = await deliveriesSoFar(pool, event);
    switch (whenReturnMissing(change, waitedMs, maxLagMs, attempts >= deps.maxDeliveries)) {
      case 'withdrawn':
        return withdrawnCase(customerReturn, readAt);
      case 'retry':
        throw new TransientError(`customer return ${customerReturn} not found yet (replication lag)`);
      case 'not_found':
        return null;
    }
  };
  return {
    async read(event, signal, trace) {
      const customerReturn = event.family === 'customerReturn' ? event.key : undefined;
      if (customerReturn === undefined) throw new PermanentError('not a customer-return event');
      const { document: found, readAt } = await inSpan(
        'S/4HANA read',
        { kind: SpanKind.CLIENT, attributes: { 'sap.customer_return': customerReturn } },
        trace,
        (_span, read) => batchedRead(customerReturn, signal, read),
      );
      if (found === null) return missing(event, customerReturn, readAt);
      return { ...toWarrantyCase(found, readAt), isCase: isWarrantyCase(found, deps.warrantyReturnReasons) };
    },
    writeEffect: groupEffects<CaseState>((events, state, trace) =>
      writeCase(pool, events, state, mail, deps.pushToPortal, traceparentOf(trace)),
    ),
  };
}

/** A case whose return is gone: the statement keeps the values the case had. */
export function withdrawnCase(customerReturn: string, readAt: Date): CaseState {
  return {
    customerReturn,
    caseStatus: 'Withdrawn',
    soldToParty: null,
    customerReference: null,
    salesOrder: null,
    returnReasons: [],
    changedAt: null,
    readAt,
    isCase: true,
  };
}
