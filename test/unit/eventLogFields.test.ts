// What every log line about an event says of it: nothing before it parsed; once it did, its source, id and type,
// and its key under its family's own field (docs/operations.md, Watch).
import { describe, expect, it } from 'vitest';
import { parseCloudEvent } from '../../src/events/cloudEvent.js';
import { identityFields } from '../../src/events/outcomeReport.js';
import { EVENT_KEYS } from '../../src/families/index.js';

const SOURCE = '/default/sap.s4.beh/244572008';

function parsed(type: string, data: object) {
  const body = JSON.stringify({ specversion: '1.0', id: 'log-1', source: SOURCE, type, data });
  const result = parseCloudEvent(
    { body: Buffer.from(body), contentType: 'application/cloudevents+json', binaryAttributes: {} },
    100_000,
    EVENT_KEYS,
  );
  if (!result.ok) throw new Error(result.reason);
  return result.event;
}

describe('the identity fields of an event log line', () => {
  it("name the key by the event's family: salesOrder for an order, customerReturn for a return", () => {
    const order = 'sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1';
    const customerReturn = 'sap.s4.beh.customerreturn.v1.CustomerReturn.Changed.v1';
    expect(identityFields(parsed(order, { SalesOrder: '7000001' }), EVENT_KEYS)).toEqual({
      source: SOURCE,
      id: 'log-1',
      type: order,
      salesOrder: '7000001',
    });
    expect(identityFields(parsed(customerReturn, { CustomerReturn: '60000001' }), EVENT_KEYS)).toEqual({
      source: SOURCE,
      id: 'log-1',
      type: customerReturn,
      customerReturn: '60000001',
    });
  });

  it('carry no key for a type no family handles, and nothing for a message that did not parse', () => {
    const other = 'sap.s4.beh.businesspartner.v1.BusinessPartner.Changed.v1';
    expect(identityFields(parsed(other, { BusinessPartner: '17100001' }), EVENT_KEYS)).toEqual({
      source: SOURCE,
      id: 'log-1',
      type: other,
    });
    expect(identityFields(undefined, EVENT_KEYS)).toEqual({});
  });
});
