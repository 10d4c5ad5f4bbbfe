// Reads outbound deliveries through the shared OData reader, on the test's own destination.
import { createODataReader, type ODataReader } from '../../../src/s4/odataReader.js';
import { type OutboundDelivery, toOutboundDelivery } from './entity.js';
import { deliveryV2 } from './services.js';

export function createDeliveryApi(options: {
  destination: string;
  timeoutMs: number;
}): ODataReader<OutboundDelivery> {
  return createODataReader(options, deliveryV2, toOutboundDelivery);
}
