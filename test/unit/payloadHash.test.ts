// The payload hash tells a redelivery from a conflict by what the event means: S/4HANA events, re-serialized by
// the official CloudEvents SDK (cloudevents 10) and extended as Event Hub extends them, keep their hash; a
// different type, subject, data or time does not. Records of the earlier, byte-for-byte hash still match.
import { CloudEvent, HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { type InboundMessage, type ParsedEvent, parseCloudEvent } from '../../src/events/cloudEvent.js';
import { isLegacyHash, samePayload } from '../../src/events/payloadHash.js';
import { EVENT_KEYS } from '../../src/families/index.js';
import {
  CAPIRE_EVENT,
  type EventSample,
  HAND_MADE_CHANGED,
  HAND_MADE_CREATED,
  readEvent,
  readSdkMessage,
  SCRIPT_EVENT,
} from '../support/realSamples.js';

const LIMIT = 1024 * 1024;
const EVENT_HUB_EXTENSIONS = { sapconsumertenant: 'a1b2c3d4-tenant', kafkapartition: 3, kafkaoffset: 18_270 };

/** An HTTP message as the webhook reads it: the content type, and the ce-* headers without their prefix. */
function fromHttp(message: { headers: Record<string, unknown>; body: unknown }): InboundMessage {
  const binaryAttributes: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (name.startsWith('ce-')) binaryAttributes[name.slice(3)] = String(value);
  }
  return {
    body: Buffer.from(String(message.body)),
    contentType: String(message.headers['content-type']),
    binaryAttributes,
  };
}

function parsed(message: InboundMessage): ParsedEvent {
  const result = parseCloudEvent(message, LIMIT, EVENT_KEYS);
  if (!result.ok) throw new Error(`expected an event, got: ${result.reason}`);
  return result.event;
}

function structured(text: string): ParsedEvent {
  return parsed({ body: Buffer.from(text), contentType: 'application/json', binaryAttributes: {} });
}

/** The sample as received, its hash, and the SDK's event made of it. */
function loaded(sample: EventSample) {
  const { text, event } = readEvent(sample);
  return { event, original: structured(text), sdkEvent: new CloudEvent(event) };
}

for (const sample of [HAND_MADE_CHANGED, HAND_MADE_CREATED, CAPIRE_EVENT, SCRIPT_EVENT]) {
  describe(
    `the payload hash of the ${sample.source.origin} S/4HANA event ${sample.name}`,
    sample.source.options,
    () => {
      it('is the same after the CloudEvents SDK re-serialized it, structured or binary, time with milliseconds', () => {
        const { original, sdkEvent } = loaded(sample);
        const sdkStructured = HTTP.structured(sdkEvent);
        const sdkBinary = HTTP.binary(sdkEvent);
        expect(String(sdkStructured.body)).toContain('.000Z');
        expect(sdkBinary.headers['ce-time']).toMatch(/\.000Z$/);
        expect(parsed(fromHttp(sdkStructured)).payloadHash).toBe(original.payloadHash);
        expect(parsed(fromHttp(sdkBinary)).payloadHash).toBe(original.payloadHash);
      });

      it('is the same in the messages the CloudEvents SDK made of it, as stored', () => {
        const { original } = loaded(sample);
        for (const mode of ['binary', 'structured'] as const) {
          expect(parsed(fromHttp(readSdkMessage(sample, mode))).payloadHash, mode).toBe(original.payloadHash);
        }
      });

      it("is the same with Event Hub's extension attributes, in either mode", () => {
        const { event, original, sdkEvent } = loaded(sample);
        const extended = sdkEvent.cloneWith(EVENT_HUB_EXTENSIONS);
        expect(parsed(fromHttp(HTTP.binary(extended))).payloadHash).toBe(original.payloadHash);
        expect(parsed(fromHttp(HTTP.structured(extended))).payloadHash).toBe(original.payloadHash);
        expect(structured(JSON.stringify({ ...event, kafkapartition: 7 })).payloadHash).toBe(
          original.payloadHash,
        );
      });

      it('is the same with a charset parameter, or with a time offset instead of Z', () => {
        const { event, original, sdkEvent } = loaded(sample);
        const binary = fromHttp(HTTP.binary(sdkEvent));
        expect(parsed({ ...binary, contentType: 'application/json; charset=utf-8' }).payloadHash).toBe(
          original.payloadHash,
        );
        const instant = new Date(String(event.time)).getTime();
        const plusOne = `${new Date(instant + 3_600_000).toISOString().slice(0, 19)}+01:00`;
        expect(structured(JSON.stringify({ ...event, time: plusOne })).payloadHash).toBe(
          original.payloadHash,
        );
      });

      it('differs for another type, subject, data, data media type or time: a conflict', () => {
        const { event, original } = loaded(sample);
        const variants = [
          { ...event, type: 'sap.s4.beh.salesorder.v1.SalesOrder.Deleted.v1' },
          { ...event, subject: 'SalesOrder/1' },
          { ...event, data: { ...event.data, SoldToParty: '17100002' } },
          { ...event, datacontenttype: 'application/vnd.sap+json' },
          { ...event, time: '2020-08-14T06:21:52.001Z' },
          { ...event, time: undefined },
        ];
        for (const variant of variants) {
          expect(structured(JSON.stringify(variant)).payloadHash, JSON.stringify(variant)).not.toBe(
            original.payloadHash,
          );
        }
      });

      it('carries its version, so records of the earlier hash are recognised', () => {
        const { original, sdkEvent } = loaded(sample);
        expect(isLegacyHash(original.payloadHash)).toBe(false);
        expect(samePayload(original.payloadHash, parsed(fromHttp(HTTP.binary(sdkEvent))))).toBe(true);
      });
    },
  );
}

describe('records of the earlier hash (every attribute as written)', () => {
  // What the service recorded in processed_event.payload_hash before the hash covered meaning only, for these
  // events received as S/4HANA publishes them.
  const HAND_MADE_RECORDED = 'd0c9ba254649882d5e240c12916c4986d97fb57c37b07e1ec15f1fe074cb3235';
  const RECORDED_BEFORE = [
    { sample: HAND_MADE_CHANGED, recorded: HAND_MADE_RECORDED },
    {
      sample: HAND_MADE_CREATED,
      recorded: 'c9f36b0c7268be5b1cb5391b8a210278f840a1b3eca9081b5dbddb34ed0d2a2e',
    },
    { sample: CAPIRE_EVENT, recorded: 'dd104836eba00c113c5201055d9340c94bcaa4ef621cabe47f8a594981e17b64' },
    { sample: SCRIPT_EVENT, recorded: '40ef3b0f9c014f1525ba67ad2f411f59c251829b9ffd074ef7703ec50111bb91' },
  ];

  for (const { sample, recorded } of RECORDED_BEFORE) {
    it(
      `still match a redelivery of the ${sample.source.origin} event ${sample.name} as it was sent`,
      sample.source.options,
      () => {
        const redelivered = structured(readEvent(sample).text);
        expect(isLegacyHash(recorded)).toBe(true);
        expect(redelivered.legacyPayloadHash()).toBe(recorded);
        expect(samePayload(recorded, redelivered)).toBe(true);
      },
    );
  }

  it('do not match another payload under the same identity', () => {
    const { event } = readEvent(HAND_MADE_CHANGED);
    const other = structured(JSON.stringify({ ...event, data: { SalesOrder: '3016330' } }));
    expect(samePayload(HAND_MADE_RECORDED, other)).toBe(false);
  });
});

describe('time as an instant', () => {
  const { event } = readEvent(HAND_MADE_CHANGED);
  const hashAt = (time: unknown) => structured(JSON.stringify({ ...event, time })).payloadHash;

  it('keeps digits beyond milliseconds, as S/4HANA writes seven', () => {
    expect(hashAt('2026-03-03T13:19:53.8123450Z')).toBe(hashAt('2026-03-03T13:19:53.812345Z'));
    expect(hashAt('2026-03-03T13:19:53.8123450Z')).not.toBe(hashAt('2026-03-03T13:19:53.8123451Z'));
  });

  it('compares a time that is not RFC 3339 as written', () => {
    expect(hashAt('yesterday')).toBe(hashAt('yesterday'));
    expect(hashAt('yesterday')).not.toBe(hashAt('today'));
    expect(hashAt('2026-13-03T13:19:53Z')).not.toBe(hashAt('2027-01-03T13:19:53Z'));
  });
});
