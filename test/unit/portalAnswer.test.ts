import { describe, expect, it } from 'vitest';
import { portalBody } from '../../src/families/salesOrder/pushResource.js';
import { classifyAnswer } from '../../src/portal/portalApi.js';
import { retryDelaySeconds } from '../../src/portal/portalSender.js';

const answer = (status: number, retryAfter?: string) => ({ status, body: 'x', retryAfter });

describe('the meaning of a portal answer', () => {
  it.each([200, 201, 204])('books %i as pushed', (status) => {
    expect(classifyAnswer(answer(status)).kind).toBe('pushed');
  });
  it.each([409, 412])('books %i as done by a conflict: the portal holds a newer state', (status) => {
    expect(classifyAnswer(answer(status)).kind).toBe('conflict');
  });
  it.each([408, 425, 429, 500, 502, 503, 504])('retries %i', (status) => {
    expect(classifyAnswer(answer(status)).kind).toBe('transient');
  });
  it.each([400, 401, 403, 404, 410, 413, 422])('parks %i for an operator', (status) => {
    expect(classifyAnswer(answer(status)).kind).toBe('parked');
  });
  it("states the answer's own error message, never its body", () => {
    const reason = (body: string) => {
      const parsed = classifyAnswer({ status: 400, body, retryAfter: undefined });
      return parsed.kind === 'parked' ? parsed.reason : undefined;
    };
    expect(reason('{"error":"bad field"}')).toBe('portal answered 400: bad field');
    expect(reason('{"error":{"message":"no such order"}}')).toBe('portal answered 400: no such order');
    expect(reason('{"message":"refused for fleet@customer.example"}')).toBe(
      'portal answered 400: refused for [address]',
    );
    expect(reason('{"salesOrder":"1","soldToParty":"17100001"}')).toBe('portal answered 400');
    expect(reason('<html>refused for fleet@customer.example</html>')).toBe('portal answered 400');
  });
  it('keeps what Retry-After asked for, as seconds or an HTTP date', () => {
    expect(classifyAnswer(answer(503, '7'))).toMatchObject({ kind: 'transient', retryAfterMs: 7000 });
    const later = new Date(Date.now() + 60_000).toUTCString();
    const parsed = classifyAnswer(answer(429, later));
    expect(parsed.kind === 'transient' && (parsed.retryAfterMs ?? 0) > 50_000).toBe(true);
  });
});

describe('the wait before a push is tried again', () => {
  it('grows exponentially with jitter and is capped at five minutes', () => {
    for (let attempts = 1; attempts <= 12; attempts++) {
      const ceiling = Math.min(300, 2 ** (attempts - 1));
      const delay = retryDelaySeconds(attempts);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
  it('is never shorter than the Retry-After the portal asked for', () => {
    expect(retryDelaySeconds(1, 30_000)).toBe(30);
  });
});

describe('the body of a push', () => {
  it('states every field of the contract, null where S/4HANA has no value', () => {
    expect(
      portalBody({
        family: 'salesOrder',
        key: '1000473',
        content: {
          salesOrder: '1000473',
          portalStatus: 'Delivered',
          requestedDeliveryDate: null,
          soldToParty: '17100001',
          customerReference: 'NFL-2026-0142',
          s4ChangedAt: '2026-03-01T08:00:00.000Z',
        },
        pushId: 'k',
        attempts: 1,
        claims: 1,
      }),
    ).toEqual({
      salesOrder: '1000473',
      portalStatus: 'Delivered',
      requestedDeliveryDate: null,
      soldToParty: '17100001',
      customerReference: 'NFL-2026-0142',
      s4ChangedAt: '2026-03-01T08:00:00.000Z',
    });
  });
});
