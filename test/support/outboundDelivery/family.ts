// The outbound-delivery family: the delivery as S/4HANA has it now, read in batches on the shared destination
// limit, and its effect, one statement for the events one read answered.
import { PermanentError } from '../../../src/errors.js';
import { groupEffects } from '../../../src/events/effectGroups.js';
import type { Family } from '../../../src/events/family.js';
import { type FamilyDeps, familyReadOptions } from '../../../src/families/familyDeps.js';
import { batchReads } from '../../../src/s4/batchedReads.js';
import { inSpan, SpanKind, traceparentOf } from '../../../src/telemetry/tracing.js';
import { createDeliveryApi } from './api.js';
import { writeDelivery } from './effect.js';
import { type DeliveryState, toDeliveryState } from './state.js';

/** `destination`: where the test serves the delivery API (the service's S4_DESTINATION serves the others). */
export function createDeliveryFamily(deps: FamilyDeps, destination: string): Family<DeliveryState> {
  const { pool, mail, pushToPortal } = deps;
  const batchedRead = batchReads(
    createDeliveryApi({ destination, timeoutMs: deps.s4.timeoutMs }),
    familyReadOptions(deps),
  );
  return {
    async read(event, signal, trace) {
      const key = event.family === 'outboundDelivery' ? event.key : undefined;
      if (key === undefined) throw new PermanentError('not an outbound-delivery event');
      const { document, readAt } = await inSpan(
        'S/4HANA read',
        { kind: SpanKind.CLIENT, attributes: { 'sap.outbound_delivery': key } },
        trace,
        (_span, read) => batchedRead(key, signal, read),
      );
      return document === null ? null : toDeliveryState(document, readAt);
    },
    writeEffect: groupEffects<DeliveryState>((events, state, trace) =>
      writeDelivery(pool, events, state, mail, pushToPortal, traceparentOf(trace)),
    ),
  };
}
