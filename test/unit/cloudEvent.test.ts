// The parser on its own: what it accepts, the exact reason for everything it refuses, and the payload hash.
import type { IncomingMessage } from '@sap/xb-msg-amqp-v100';
import { describe, expect, it } from 'vitest';
import { type InboundMessage, type ParseResult, parseCloudEvent } from '../../src/events/cloudEvent.js';
import { EVENT_KEYS } from '../../src/families/index.js';
import { SALES_ORDER_TYPE_PREFIX } from '../../src/families/salesOrder/events.js';
import { toInbound } from '../../src/messaging/amqpMessage.js';
import {
  type HostileMessage,
  hostileMessages,
  metadataHostileMessages,
  paddedEvent,
} from '../fixtures/hostileMessages.js';

const LIMIT = 256 * 1024;
const SOURCE = '/default/sap.s4.beh/244572008';
const CHANGED = `${SALES_ORDER_TYPE_PREFIX}Changed.v1`;
// The shape SAP documents for a header event, field for field.
const S4_EVENT = {
  specversion: '1.0',
  type: CHANGED,
  source: SOURCE,
  id: '0894ef45-7741-1eea-b7be-ce30f48e9a1d',
  time: '2026-03-03T13:19:54Z',
  datacontenttype: 'application/json',
  data: {
    SalesOrder: '1000473',
    SalesOrderType: 'OR',
    SalesOrganization: '1710',
    DistributionChannel: '10',
    OrganizationDivision: '00',
    SoldToParty: '17100001',
    EventRaisedDateTime: '2026-03-03T13:19:53.8123450Z',
  },
};

function parse(
  body: string | Buffer | object,
  contentType: string | undefined = 'application/json',
  binaryAttributes: Record<string, unknown> = {},
): ParseResult {
  const bytes = Buffer.isBuffer(body)
    ? body
    : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return parseCloudEvent({ body: bytes, contentType, binaryAttributes }, LIMIT, EVENT_KEYS);
}

function reasonOf(result: ParseResult): string {
  if (result.ok) throw new Error(`expected a rejection, got ${JSON.stringify(result.event)}`);
  return result.reason;
}

function eventOf(result: ParseResult) {
  if (!result.ok) throw new Error(`expected an event, got: ${result.reason}`);
  return result.event;
}

function withEvent(change: Record<string, unknown>): Record<string, unknown> {
  return { ...S4_EVENT, ...change };
}

function withKey(salesOrder: unknown): Record<string, unknown> {
  return withEvent({ data: { ...S4_EVENT.data, SalesOrder: salesOrder } });
}

/** The event's attributes as binary-mode application properties would carry them (prefix removed). */
function asBinary(event: Record<string, unknown>): { body: string; attributes: Record<string, unknown> } {
  const { data, datacontenttype: _ignored, ...attributes } = event;
  return { body: JSON.stringify(data), attributes };
}

describe('structured mode', () => {
  it('accepts an S/4HANA sales-order event and returns its identity and order key', () => {
    const event = eventOf(parse(S4_EVENT));
    expect(event).toEqual({
      source: SOURCE,
      id: S4_EVENT.id,
      type: CHANGED,
      family: 'salesOrder',
      key: '1000473',
      payloadHash: expect.stringMatching(/^m1:[0-9a-f]{64}$/),
      legacyPayloadHash: expect.any(Function),
    });
  });

  it.each([
    'Created.v1',
    'Changed.v1',
    'Deleted.v1',
    'ApprovalStsChanged.v1',
    'ItemCreated.v1',
    'ItemChanged.v1',
    'ItemDeleted.v1',
    'OvrlDelivStsChgd.v1',
    'OvrlSDProcStsChgd.v1',
    'OvrlBlgBlkStsChgd.v1',
    'OvrlDlvBlkStsChgd.v1',
    'OvrlDlvConfStsChgd.v1',
    'OvrlRjcnStsChgd.v1',
    'TotCrdtChkStsChgd.v1',
    'ItmDelivStsChgd.v1',
    'ItmSDProcStsChgd.v1',
    'ItmBillgBlkStsChgd.v1',
    'ItmDelivBlkStsChgd.v1',
    'ItmDlvConfStsChgd.v1',
    'ItmGenIncplStsChgd.v1',
    'ItmRjcnStsChgd.v1',
    'ItmPrftCtrChanged.v1',
    'ItmWBSElmntChanged.v1',
  ])('takes the order key from a %s event', (variant) => {
    expect(eventOf(parse(withEvent({ type: `${SALES_ORDER_TYPE_PREFIX}${variant}` }))).key).toBe('1000473');
  });

  it('accepts an older event that carries only SalesOrder in data', () => {
    expect(eventOf(parse(withEvent({ data: { SalesOrder: '42' } }))).key).toBe('42');
  });

  it('accepts events of other types without a sales order, whatever their data', () => {
    for (const data of [
      undefined,
      null,
      [1, 2],
      'text',
      { BusinessPartner: '1' },
      { SalesOrder: "1') or ('1" },
    ]) {
      const event = eventOf(
        parse(withEvent({ type: 'sap.s4.beh.businesspartner.v1.BusinessPartner.Changed.v1', data })),
      );
      expect(event.key).toBeUndefined();
      expect(event.type).toBe('sap.s4.beh.businesspartner.v1.BusinessPartner.Changed.v1');
    }
  });

  it('treats a type that only resembles the sales-order prefix as another type', () => {
    const event = eventOf(
      parse(withEvent({ type: 'SAP.S4.BEH.SALESORDER.V1.SALESORDER.CHANGED.V1', data: null })),
    );
    expect(event.key).toBeUndefined();
  });

  it('accepts harmless keys named like Object.prototype members and unknown extension attributes', () => {
    const event = eventOf(
      parse(
        withEvent({
          sapcorrelationid: 'c-1',
          data: { SalesOrder: '7', constructor: 'x', toString: 1, hasOwnProperty: null, prototype: {} },
        }),
      ),
    );
    expect(event.key).toBe('7');
  });

  it('accepts a UTF-8 byte order mark and non-ASCII printable text', () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify(withEvent({ id: 'Bestellung-Größe-注文-😀' }))),
    ]);
    expect(eventOf(parse(body)).id).toBe('Bestellung-Größe-注文-😀');
  });

  it('accepts a body exactly at the size limit and refuses one byte more', () => {
    const at = paddedEvent(LIMIT, '1000473', 'at-limit', SOURCE);
    expect(Buffer.byteLength(at)).toBe(LIMIT);
    expect(eventOf(parse(at)).key).toBe('1000473');
    const over = paddedEvent(LIMIT + 1, '1000473', 'over-limit', SOURCE);
    expect(reasonOf(parse(over))).toBe(
      `message body of ${LIMIT + 1} bytes exceeds the limit of ${LIMIT} bytes`,
    );
  });

  it('accepts JSON nested 32 levels deep and refuses 33', () => {
    const nested = (levels: number) => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`) as unknown;
    // The event object itself is the first level, data the second.
    expect(parse(withEvent({ data: { SalesOrder: '1', deep: nested(30) } })).ok).toBe(true);
    expect(reasonOf(parse(withEvent({ data: { SalesOrder: '1', deep: nested(31) } })))).toBe(
      'JSON is nested deeper than 32 levels',
    );
  });

  it('accepts id, source and type at their maximum lengths and refuses one character more', () => {
    expect(parse(withEvent({ id: 'i'.repeat(256), source: 's'.repeat(512), type: 't'.repeat(256) })).ok).toBe(
      true,
    );
    expect(reasonOf(parse(withEvent({ id: 'i'.repeat(257) })))).toBe('id is longer than 256 characters');
    expect(reasonOf(parse(withEvent({ source: 's'.repeat(513) })))).toBe(
      'source is longer than 512 characters',
    );
    expect(reasonOf(parse(withEvent({ type: 't'.repeat(257) })))).toBe('type is longer than 256 characters');
  });
});

describe('the sales order key', () => {
  it.each(['1', '1000473', '0000000001', 'ABCdef1234', 'Z', '9999999999'])('accepts %j', (key) => {
    expect(eventOf(parse(withKey(key))).key).toBe(key);
  });

  it.each([
    ['', '""'],
    ['12345678901', '"12345678901"'],
    ['1000-473', '"1000-473"'],
    ['1000_473', '"1000_473"'],
    ['1000 473', '"1000 473"'],
    ['１０００', '"１０００"'],
    ['АВС', '"АВС"'],
    ['é1', '"é1"'],
    ["1') or ('1", '"1\') or (\'1"'],
    ['1\r\n2', '"1\\r\\n2"'],
  ])('refuses %j with the key in the reason', (key, shown) => {
    expect(reasonOf(parse(withKey(key)))).toBe(
      `data.SalesOrder must be 1 to 10 letters or digits, got ${shown}`,
    );
  });

  it.each([
    [1000473, '1000473'],
    [null, 'null'],
    [true, 'true'],
    [['1'], '["1"]'],
    [{ value: '1' }, '{"value":"1"}'],
  ])('refuses a %j key that is not a string', (key, shown) => {
    expect(reasonOf(parse(withKey(key)))).toBe(
      `data.SalesOrder must be 1 to 10 letters or digits, got ${shown}`,
    );
  });

  it('refuses a missing key', () => {
    expect(reasonOf(parse(withEvent({ data: { SalesOrderType: 'OR' } })))).toBe(
      'data.SalesOrder must be 1 to 10 letters or digits, got nothing',
    );
  });

  it('clips a long rejected value in the reason', () => {
    const reason = reasonOf(parse(withKey('9'.repeat(5000))));
    expect(reason).toBe(`data.SalesOrder must be 1 to 10 letters or digits, got "${'9'.repeat(59)}…`);
  });
});

describe('customer-return events', () => {
  const returnType = (name: string) => `sap.s4.beh.customerreturn.v1.CustomerReturn.${name}.v1`;
  const returnEvent = (name: string, data: unknown) => withEvent({ type: returnType(name), data });

  it.each(['Created', 'Changed', 'Deleted', 'ItemCreated', 'ItemChanged', 'ItemDeleted'])(
    'accepts %s as an event of the customer-return family keyed by its return',
    (name) => {
      const event = eventOf(parse(returnEvent(name, { CustomerReturn: '60000001' })));
      expect(event).toMatchObject({ family: 'customerReturn', key: '60000001', type: returnType(name) });
    },
  );

  it('normalises the key: trimmed, an all-digit key without its leading zeros', () => {
    expect(eventOf(parse(returnEvent('Changed', { CustomerReturn: ' 0060000000 ' }))).key).toBe('60000000');
    expect(eventOf(parse(returnEvent('Changed', { CustomerReturn: 'R0001' }))).key).toBe('R0001');
  });

  it('gives the same identity and hash to a return event in binary mode as in structured mode', () => {
    const structured = returnEvent('Created', { CustomerReturn: '60000002' });
    const { body, attributes } = asBinary(structured);
    const binary = eventOf(parse(body, 'application/json', attributes));
    expect(binary).toMatchObject({ family: 'customerReturn', key: '60000002' });
    expect(binary.payloadHash).toBe(eventOf(parse(structured)).payloadHash);
  });

  it.each([
    [{ CustomerReturn: '' }, 'data.CustomerReturn must be 1 to 10 letters or digits, got ""'],
    [
      { CustomerReturn: '60000000001' },
      'data.CustomerReturn must be 1 to 10 letters or digits, got "60000000001"',
    ],
    [
      { CustomerReturn: "1') or ('1" },
      `data.CustomerReturn must be 1 to 10 letters or digits, got "1') or ('1"`,
    ],
    [{ CustomerReturn: 60000000 }, 'data.CustomerReturn must be 1 to 10 letters or digits, got 60000000'],
    [{ SalesOrder: '1' }, 'data.CustomerReturn must be 1 to 10 letters or digits, got nothing'],
    [null, 'data must be a JSON object, got null'],
  ])('refuses a return event whose data is %j with a reason', (data, reason) => {
    expect(reasonOf(parse(returnEvent('Changed', data)))).toBe(reason);
  });

  it('refuses any other customer-return type with a reason naming it', () => {
    expect(reasonOf(parse(returnEvent('Released', { CustomerReturn: '1' })))).toBe(
      `event type "${returnType('Released')}" is not a customer-return event handled here`,
    );
  });
});

describe('binary mode', () => {
  it('reads the attributes from application properties and the data from the body', () => {
    const { body, attributes } = asBinary(S4_EVENT);
    const event = eventOf(parse(body, 'application/json', attributes));
    expect(event).toMatchObject({
      source: SOURCE,
      id: S4_EVENT.id,
      type: CHANGED,
      family: 'salesOrder',
      key: '1000473',
    });
  });

  it('accepts AMQP timestamps, integers beyond 2^53, booleans and binary as extension attributes', () => {
    const { body, attributes } = asBinary(S4_EVENT);
    const extended = {
      ...attributes,
      time: new Date('2026-03-03T13:19:54Z'),
      sequence: 2n ** 64n - 1n,
      replay: false,
      digest: Buffer.from([1, 2, 3]),
      none: null,
    };
    const event = eventOf(parse(body, 'application/json', extended));
    expect(event).toMatchObject({
      source: SOURCE,
      id: S4_EVENT.id,
      type: CHANGED,
      family: 'salesOrder',
      key: '1000473',
    });
    // Extension attributes are not part of what the event means, and the timestamp is the same instant.
    expect(event.payloadHash).toBe(eventOf(parse(body, 'application/json', attributes)).payloadHash);
  });

  it.each([
    [{ id: undefined }, 'id must be a string, got nothing'],
    [{ specversion: undefined }, 'specversion must be "1.0", got nothing'],
    [{ source: '' }, 'source must not be empty'],
    [{ type: 5 }, 'type must be a string, got 5'],
    [{ data: '{}' }, 'binary attribute "data" is not allowed: in binary mode the body is the data'],
    [{ Id: 'x' }, 'binary attribute "Id" is not a CloudEvents attribute name'],
    [{ 'sap-id': 'x' }, 'binary attribute "sap-id" is not a CloudEvents attribute name'],
    [{ __proto__x: 'x' }, 'binary attribute "__proto__x" is not a CloudEvents attribute name'],
    [
      { ext: { a: 1 } },
      'binary attribute "ext" must be a string, number, boolean, timestamp or binary, got a map',
    ],
    [
      { ext: [1] },
      'binary attribute "ext" must be a string, number, boolean, timestamp or binary, got a list',
    ],
    [{ ext: Number.NaN }, 'binary attribute "ext" is not a finite number'],
    [{ ext: new Date(Number.NaN) }, 'binary attribute "ext" is an invalid timestamp'],
    [{ ext: 'a\ud800' }, 'binary attribute "ext" contains an unpaired UTF-16 surrogate'],
    [{ id: 'a\u0000b' }, 'id contains a control or invisible character (U+0000)'],
  ])('refuses attributes %j', (change, reason) => {
    const { body, attributes } = asBinary(S4_EVENT);
    const changed = Object.fromEntries(
      Object.entries({ ...attributes, ...change }).filter(([, value]) => value !== undefined),
    );
    expect(reasonOf(parse(body, 'application/json', changed))).toBe(reason);
  });

  it('refuses an attribute the transport carried twice', () => {
    const { body, attributes } = asBinary(S4_EVENT);
    const message = {
      body: Buffer.from(body),
      contentType: 'application/json',
      binaryAttributes: attributes,
    };
    expect(reasonOf(parseCloudEvent({ ...message, repeatedAttributes: ['id'] }, LIMIT, EVENT_KEYS))).toBe(
      'binary attribute "id" is given more than once',
    );
  });

  it('refuses a body that is not a JSON object for a sales-order type, naming the data', () => {
    const { attributes } = asBinary(S4_EVENT);
    expect(reasonOf(parse('"1000473"', 'application/json', attributes))).toBe(
      'data must be a JSON object, got "1000473"',
    );
    expect(reasonOf(parse('{"SalesOrder":"1","SalesOrder":"2"}', 'application/json', attributes))).toBe(
      'duplicate key "SalesOrder" in /data',
    );
  });

  it('reads a structured event as structured when attributes that agree travel beside it', () => {
    const event = eventOf(
      parse(S4_EVENT, 'application/cloudevents+json', { id: S4_EVENT.id, source: SOURCE, extra: 'x' }),
    );
    const { legacyPayloadHash, ...rest } = event;
    const { legacyPayloadHash: alone, ...expected } = eventOf(parse(S4_EVENT));
    expect(rest).toEqual(expected);
    expect(legacyPayloadHash()).toBe(alone());
  });

  it('refuses a structured event whose attributes beside it name another identity', () => {
    expect(reasonOf(parse(S4_EVENT, 'application/cloudevents+json', { source: '/other' }))).toBe(
      'binary attribute "source" disagrees with the structured event',
    );
  });
});

describe('content types', () => {
  it.each([
    'application/json',
    'application/cloudevents+json',
    'application/json; charset=utf-8',
    'Application/JSON; Charset="UTF-8"',
    'application/cloudevents+json;charset=utf8',
    'application/vnd.sap+json',
    '',
    undefined,
  ])('accepts %j', (contentType) => {
    expect(eventOf(parse(S4_EVENT, contentType)).key).toBe('1000473');
  });

  it.each([
    ['text/plain', 'content type "text/plain" is not JSON'],
    ['application/xml', 'content type "application/xml" is not JSON'],
    ['application/octet-stream', 'content type "application/octet-stream" is not JSON'],
    ['text/json', 'content type "text/json" is not JSON'],
    ['application/jsonx', 'content type "application/jsonx" is not JSON'],
    ['application/json; charset=latin1', 'content type charset "latin1" is not UTF-8'],
    ['application/json; charset=utf-16', 'content type charset "utf-16" is not UTF-8'],
    ['application/cloudevents-batch+json', 'batched CloudEvents are not supported'],
    ['amqp-1.0', 'body is an AMQP value section, not JSON data'],
    ['text/plain\r\nBcc: x', 'content type "text/plain\\r\\nBcc: x" is not a valid media type'],
  ])('refuses %j', (contentType, reason) => {
    expect(reasonOf(parse(S4_EVENT, contentType))).toBe(reason);
  });
});

describe('the payload hash', () => {
  const hashOf = (result: ParseResult) => eventOf(result).payloadHash;

  it('does not depend on key order or whitespace', () => {
    const reordered = {
      data: Object.fromEntries(Object.entries(S4_EVENT.data).reverse()),
      ...Object.fromEntries(
        Object.entries(S4_EVENT)
          .filter(([key]) => key !== 'data')
          .reverse(),
      ),
    };
    expect(hashOf(parse(JSON.stringify(reordered, null, 2)))).toBe(hashOf(parse(S4_EVENT)));
  });

  it('is the same for an event sent in structured and in binary mode', () => {
    const { body, attributes } = asBinary(S4_EVENT);
    expect(hashOf(parse(body, 'application/json', attributes))).toBe(hashOf(parse(S4_EVENT)));
    expect(hashOf(parse(body, 'application/json; charset=utf-8', attributes))).toBe(hashOf(parse(S4_EVENT)));
  });

  it('treats an absent datacontenttype as JSON', () => {
    const { datacontenttype: _absent, ...withoutContentType } = S4_EVENT;
    expect(hashOf(parse(withoutContentType))).toBe(hashOf(parse(S4_EVENT)));
  });

  it('is the same whatever the transport content type of a structured event', () => {
    expect(hashOf(parse(S4_EVENT, 'application/cloudevents+json'))).toBe(hashOf(parse(S4_EVENT)));
    expect(hashOf(parse(S4_EVENT, undefined))).toBe(hashOf(parse(S4_EVENT)));
  });

  it('changes when data or time change', () => {
    const base = hashOf(parse(S4_EVENT));
    expect(hashOf(parse(withEvent({ data: { ...S4_EVENT.data, SoldToParty: '17100002' } })))).not.toBe(base);
    expect(hashOf(parse(withEvent({ time: '2026-03-03T13:19:55Z' })))).not.toBe(base);
    expect(hashOf(parse(withEvent({ data: { ...S4_EVENT.data, SalesOrder: '1000474' } })))).not.toBe(base);
  });
});

describe('reasons', () => {
  const PRINTABLE = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]+$/u;

  it('never carry control characters from the input', () => {
    for (const body of ['x\r\nBcc: a@b\u0000', '{"a":\u2028}', '\u202e{', `{"id":"${'\u0085'.repeat(10)}`]) {
      const reason = reasonOf(parse(body));
      expect(reason).toMatch(/^body is not valid JSON \(/);
      expect(reason).toMatch(PRINTABLE);
    }
  });

  it('quote no email address from the input, in a value, a key or a parse error', () => {
    expect(reasonOf(parse(withKey('ann.fleetwood@fleet.example')))).toBe(
      'data.SalesOrder must be 1 to 10 letters or digits, got "[address]"',
    );
    // One that starts within the part kept, but ends past it: replaced whole, before the clip.
    expect(reasonOf(parse(withKey(`${'9'.repeat(50)} ann.fleetwood@${'fleet'.repeat(40)}.example`)))).toBe(
      `data.SalesOrder must be 1 to 10 letters or digits, got "${'9'.repeat(50)} [address…`,
    );
    expect(reasonOf(parse('{"ann@fleet.example":1,"ann@fleet.example":2}'))).not.toContain('ann@');
    expect(reasonOf(parse('ann@fleet.example'))).toMatch(/^body is not valid JSON \(.*\[address\]/);
  });

  it('never cut a surrogate pair in half when clipping', () => {
    const reason = reasonOf(parse(withKey('😀'.repeat(100))));
    expect(reason).toMatch(PRINTABLE);
    expect(reason.endsWith('…')).toBe(true);
  });
});

/** The corpus message as the AMQP client would hand it over, through the consumer's own mapping. */
function received(message: HostileMessage): InboundMessage {
  const properties = message.properties;
  const payload =
    message.amqpValue === undefined
      ? { chunks: [message.body], type: message.contentType, properties }
      : { type: 'amqp-1.0', data: message.amqpValue, properties };
  return toInbound({ payload, source: {} } as unknown as IncomingMessage);
}

describe('the hostile corpus', () => {
  const corpus = hostileMessages(LIMIT);

  it.each([...corpus, ...metadataHostileMessages()].map((message) => [message.name, message] as const))(
    'refuses %s with its reason',
    (_name, message) => {
      const result = parseCloudEvent(received(message), LIMIT, EVENT_KEYS);
      expect(reasonOf(result)).toMatch(message.reason);
    },
  );
});

describe('distributed-tracing extension', () => {
  const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('keeps a valid traceparent and tracestate, structured or binary, without changing the payload hash', () => {
    const plain = eventOf(parse(S4_EVENT));
    const structured = eventOf(parse(withEvent({ traceparent: TRACEPARENT, tracestate: 'sap=1,other=2' })));
    expect(structured).toMatchObject({ traceparent: TRACEPARENT, tracestate: 'sap=1,other=2' });
    const { body, attributes } = asBinary(withEvent({ traceparent: TRACEPARENT }));
    const binary = eventOf(parse(body, 'application/json', attributes));
    expect(binary.traceparent).toBe(TRACEPARENT);
    expect(binary.tracestate).toBeUndefined();
    // A traced copy of an event is the same event: extensions are not part of its meaning.
    expect(structured.payloadHash).toBe(plain.payloadHash);
    expect(binary.payloadHash).toBe(plain.payloadHash);
  });

  it('ignores a malformed traceparent (and the tracestate with it) and still accepts the event', () => {
    for (const traceparent of [
      'not-a-trace',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      42,
    ]) {
      const event = eventOf(parse(withEvent({ traceparent, tracestate: 'sap=1' })));
      expect(event.traceparent, String(traceparent)).toBeUndefined();
      expect(event.tracestate).toBeUndefined();
    }
  });

  it('drops a tracestate with control characters but keeps the traceparent', () => {
    const event = eventOf(parse(withEvent({ traceparent: TRACEPARENT, tracestate: 'sap=1\r\nx' })));
    expect(event).toMatchObject({ traceparent: TRACEPARENT });
    expect(event.tracestate).toBeUndefined();
  });
});
