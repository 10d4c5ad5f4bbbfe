// Properties of the parser over generated input: it never throws, whatever it accepts is a valid event,
// whatever it refuses has a printable reason, and the payload hash ignores key order and transport mode.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ParsedEvent, type ParseResult, parseCloudEvent } from '../../src/events/cloudEvent.js';
import { EVENT_KEYS } from '../../src/families/index.js';
import { SALES_ORDER_TYPE_PREFIX } from '../../src/families/salesOrder/events.js';

const LIMIT = 64 * 1024;
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const KEY = /^[A-Za-z0-9]{1,10}$/;
// The parser's last-resort guard: reaching it means a case the explicit checks did not foresee.
const GUARD = /^event could not be parsed/;

/** Asserts the contract for one input; returns the result for further checks. */
function checked(
  body: Buffer,
  contentType: string | undefined,
  binaryAttributes: Record<string, unknown>,
): ParseResult {
  let result: ParseResult;
  try {
    result = parseCloudEvent({ body, contentType, binaryAttributes }, LIMIT, EVENT_KEYS);
  } catch (err) {
    throw new Error(`parseCloudEvent threw: ${String(err)}`);
  }
  if (result.ok) {
    const { event } = result;
    for (const text of [event.id, event.source, event.type]) {
      expect(typeof text).toBe('string');
      expect(text.trim()).not.toBe('');
      expect(text).not.toMatch(UNPRINTABLE);
      expect(text.length).toBeLessThanOrEqual(512);
    }
    if (event.type.startsWith(SALES_ORDER_TYPE_PREFIX)) {
      expect(event.family).toBe('salesOrder');
      expect(event.key).toMatch(KEY);
    } else expect(event.family).not.toBe('salesOrder');
    expect(event.payloadHash).toMatch(/^m1:[0-9a-f]{64}$/);
    expect(event.legacyPayloadHash()).toMatch(/^[0-9a-f]{64}$/);
  } else {
    expect(typeof result.reason).toBe('string');
    expect(result.reason.length).toBeGreaterThan(0);
    expect(result.reason.length).toBeLessThanOrEqual(300);
    expect(result.reason).not.toMatch(UNPRINTABLE);
    expect(result.reason).not.toMatch(GUARD);
  }
  return result;
}

// Text with everything a hostile producer could put in a string: any UTF-16 code unit, lone surrogates included.
const anyText = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) });
const someText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  anyText,
  fc.constantFrom('', ' ', '\r\n'),
);
const contentTypes = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/cloudevents+json',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/cloudevents-batch+json',
      'text/plain',
      'amqp-1.0',
      '',
    ),
    someText,
  ),
  { nil: undefined },
);
const salesOrderTypes = fc
  .constantFrom('Created.v1', 'Changed.v1', 'ItemChanged.v1')
  .map((t) => SALES_ORDER_TYPE_PREFIX + t);
const validKey = fc.stringMatching(/^[A-Za-z0-9]{1,10}$/);
const printable = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 40 })
  .filter((s) => s.trim() !== '' && !UNPRINTABLE.test(s));
const jsonValue = fc.jsonValue({ maxDepth: 4 });
const anything = fc.anything({
  maxDepth: 3,
  withBigInt: true,
  withDate: true,
  withTypedArray: true,
  withNullPrototype: true,
  withBoxedValues: true,
  withMap: true,
  withSet: true,
  withSparseArray: true,
  withUnicodeString: true,
});

/** CloudEvent-like objects: each attribute valid, invalid, or absent. */
const eventLike = fc.record(
  {
    specversion: fc.oneof(fc.constant('1.0'), jsonValue),
    id: fc.oneof(printable, someText, jsonValue),
    source: fc.oneof(printable, someText, jsonValue),
    type: fc.oneof(salesOrderTypes, someText, jsonValue),
    datacontenttype: fc.oneof(fc.constant('application/json'), jsonValue),
    data: fc.oneof(
      fc.record({ SalesOrder: fc.oneof(validKey, someText, jsonValue) }, { requiredKeys: [] }),
      fc.dictionary(someText, jsonValue, { maxKeys: 5 }),
      jsonValue,
    ),
    constructor: fc.oneof(fc.constant({ prototype: {} }), fc.string()),
  },
  { requiredKeys: [] },
);

// JSON without prototype-poisoning keys, which the parser refuses on purpose.
const plainJson = jsonValue.filter((v) => !/"(?:__proto__|prototype)":/.test(JSON.stringify(v)));

/** Events every field of which is valid. */
const validEvent = fc.record({
  specversion: fc.constant('1.0'),
  id: printable,
  source: printable,
  type: fc.oneof(salesOrderTypes, printable),
  time: fc.constant('2026-03-03T13:19:54Z'),
  data: fc.record({ SalesOrder: validKey, SoldToParty: fc.string(), Extra: plainJson }),
});

/** JSON text of an object with its keys (at every level) in a random order, with random whitespace. */
function shuffledJson(value: unknown, order: number[], space: string): string {
  let next = 0;
  const shuffle = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(shuffle);
    if (typeof v !== 'object' || v === null) return v;
    const entries = Object.entries(v).map(([k, x]) => [k, shuffle(x)] as const);
    const weights = entries.map(() => order[next++ % order.length] ?? 0);
    const sorted = entries.map((e, i) => [e, weights[i] ?? 0] as const).sort((a, b) => a[1] - b[1]);
    return Object.fromEntries(sorted.map(([e]) => e));
  };
  return JSON.stringify(shuffle(value), null, space);
}

describe('parseCloudEvent on generated input', () => {
  it('never throws on arbitrary bytes under any content type', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), contentTypes, (bytes, contentType) => {
        checked(Buffer.from(bytes), contentType, {});
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws on arbitrary JSON values, including text with lone surrogates', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 40, stringUnit: 'binary' }),
        contentTypes,
        (value, contentType) => {
          checked(Buffer.from(JSON.stringify(value) ?? 'null'), contentType, {});
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('never throws on CloudEvent-like objects, and accepts only valid events', () => {
    fc.assert(
      fc.property(eventLike, (event) => {
        checked(Buffer.from(JSON.stringify(event)), 'application/json', {});
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws on JSON text with keys repeated, escaped or stretched', () => {
    const fragments = fc.constantFrom(
      '"id":"a"',
      '"\\u0069d":"b"',
      '"data":{"SalesOrder":"1"}',
      '"data":{"SalesOrder":"1","SalesOrder":"2"}',
      '"__proto__":{}',
      '"constructor":{"prototype":1}',
      '"x":1e400',
      '"x":-1e-400',
      '"x":"\\ud800"',
      '"x":"\\ud83d\\ude00"',
      '"x":"\\\\ud800"',
      `"type":"${SALES_ORDER_TYPE_PREFIX}Changed.v1"`,
      '"source":"/s"',
      '"specversion":"1.0"',
    );
    fc.assert(
      fc.property(fc.array(fragments, { maxLength: 12 }), (parts) => {
        checked(Buffer.from(`{${parts.join(',')}}`), 'application/json', {});
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws on arbitrary binary-mode attribute maps', () => {
    const attributeName = fc.oneof(
      fc.constantFrom(
        'specversion',
        'id',
        'source',
        'type',
        'time',
        'data',
        'datacontenttype',
        '__proto__',
        'ID',
      ),
      fc.string(),
    );
    const attributeValue = fc.oneof(printable, fc.constant('1.0'), salesOrderTypes, someText, anything);
    const body = fc.oneof(
      jsonValue.map((v) => JSON.stringify(v)),
      validKey.map((key) => JSON.stringify({ SalesOrder: key })),
      fc.string(),
    );
    fc.assert(
      fc.property(
        fc.dictionary(attributeName, attributeValue, { maxKeys: 8 }),
        body,
        contentTypes,
        (attributes, text, contentType) => {
          checked(Buffer.from(text), contentType, attributes);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('accepts every event whose fields are all valid, with the key from its data', () => {
    fc.assert(
      fc.property(validEvent, (event) => {
        const result = checked(Buffer.from(JSON.stringify(event)), 'application/json', {});
        expect(result.ok).toBe(true);
        if (result.ok && event.type.startsWith(SALES_ORDER_TYPE_PREFIX)) {
          expect(result.event.key).toBe(event.data.SalesOrder);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('gives a valid event the same hash with its keys shuffled and re-serialised', () => {
    fc.assert(
      fc.property(
        validEvent,
        fc.array(fc.integer(), { minLength: 1, maxLength: 20 }),
        fc.constantFrom('', ' ', '\t', '\n  '),
        (event, order, space) => {
          const original = checked(Buffer.from(JSON.stringify(event)), 'application/json', {});
          const shuffled = checked(Buffer.from(shuffledJson(event, order, space)), 'application/json', {});
          expect(original.ok && shuffled.ok).toBe(true);
          if (original.ok && shuffled.ok) expect(shuffled.event.payloadHash).toBe(original.event.payloadHash);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('gives a valid event the same hash in structured and in binary mode', () => {
    fc.assert(
      fc.property(validEvent, (event) => {
        const { data, ...attributes } = event;
        const structured = checked(Buffer.from(JSON.stringify(event)), 'application/json', {});
        const binary = checked(Buffer.from(JSON.stringify(data)), 'application/json', attributes);
        expect(structured.ok && binary.ok).toBe(true);
        if (structured.ok && binary.ok)
          expect(comparable(binary.event)).toEqual(comparable(structured.event));
      }),
      { numRuns: 500 },
    );
  });
});

/** The event with its lazily computed earlier hash as a value, so two events compare with toEqual. */
function comparable({ legacyPayloadHash, ...event }: ParsedEvent) {
  return { ...event, legacyPayloadHash: legacyPayloadHash() };
}
