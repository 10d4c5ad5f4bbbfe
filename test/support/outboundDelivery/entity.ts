// The outbound delivery as the family uses it, mapped from the V2 entity. Pure.
import { UnexpectedResponseError } from '../../../src/s4/odataEntity.js';
import type { ODataService } from '../../../src/s4/odataService.js';

export interface OutboundDelivery {
  deliveryDocument: string;
  /** OverallGoodsMovementStatus: A not yet, B partly, C completely issued. */
  goodsMovementStatus: string;
  soldToParty: string | null;
  changedAt: Date | null;
}

export function toOutboundDelivery(
  entity: Record<string, unknown>,
  expectedKey: string,
  service: ODataService,
): OutboundDelivery {
  if (entity.DeliveryDocument !== expectedKey) {
    throw new UnexpectedResponseError(`response is for delivery ${JSON.stringify(entity.DeliveryDocument)}`);
  }
  const text = (name: string) => (typeof entity[name] === 'string' ? (entity[name] as string).trim() : '');
  return {
    deliveryDocument: expectedKey,
    goodsMovementStatus: text('OverallGoodsMovementStatus'),
    soldToParty: text('SoldToParty') || null,
    changedAt: service.time.dateTime(entity.LastChangeDate),
  };
}
